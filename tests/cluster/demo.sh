#!/bin/sh
# The main demo (make demo): two Soft-RoCE nodes load krcore.ko at boot,
# each shows its status and node card, then the cards of both nodes.
. "$KRC_REPO/tests/cluster/lib.sh"

krc_load || { fail "krcore.ko does not load"; finish; }
krctl card >"$KRC_RUN/card.$KRC_NODE"
barrier cards
if [ "$KRC_NODE" = 0 ]; then
	krctl status
	echo
	echo "node cards, as each node published it:"
	paste "$KRC_RUN/card.0" "$KRC_RUN/card.1" |
		awk -F '\t' '{ printf "  %-36s %s\n", $1, $2 }'
fi
barrier shown
krc_unload
finish
