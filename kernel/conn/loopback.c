// SPDX-License-Identifier: GPL-2.0
/*
 * loopback.c - connections to this node itself.
 *
 * A VQ may connect to its own node: the node is a peer like any other
 * (the local peer, made at start with our own card), whose pool holds
 * RC QPs connected to themselves. No handshake: a loopback connection
 * is ready as soon as its QP is. The data layer also takes loopback
 * connections in no pool for work of its own (the datagram executor).
 */
#include "conn/conn.h"

static struct krc_peer *krc_self_peer;	/* under krc_node.lock */

/* A QP of this node connected to itself, in no pool (a reference). */
struct krc_conn *krc_conn_loopback(void)
{
	struct krc_node *node = &krc_node;
	struct krc_conn *conn;
	int ret;

	if (!READ_ONCE(node->up))
		return ERR_PTR(-ENODEV);
	conn = krc_conn_create();
	if (IS_ERR(conn))
		return conn;
	ret = krc_conn_rtr_rts(conn, &node->card, conn->qpn, conn->psn);
	if (ret) {
		krc_conn_kill(conn);
		krc_conn_put(conn);
		return ERR_PTR(ret);
	}
	conn->state = KRC_CONN_READY;
	conn->remote_incarnation = krc_incarnation;
	conn->initiator = true;
	if (node->page_mr) {
		conn->probe_addr = node->page_mr->iova;
		conn->probe_rkey = node->page_mr->rkey;
		conn->probe_len = KRC_NODE_AREA;
	}
	return conn;
}

/*
 * A new loopback connection in the pool of the node's own peer, for VQs
 * that connect to this node (their first one, or after one of them broke
 * the last one). Returns it with a reference for the caller. Process
 * context; the node is up.
 */
struct krc_conn *krc_loopback_connect(void)
{
	struct krc_peer *peer = READ_ONCE(krc_self_peer);
	struct krc_conn *conn;
	int ret;

	if (!peer)
		return ERR_PTR(-ENODEV);
	conn = krc_conn_loopback();
	if (IS_ERR(conn))
		return conn;
	kref_get(&conn->ref);
	ret = krc_peer_attach(peer, conn);
	if (ret) {
		krc_conn_kill(conn);
		krc_conn_put(conn);
		krc_conn_put(conn);
		return ERR_PTR(ret);
	}
	krc_event(KRC_EV_LOOPBACK_CREATED);
	return conn;
}

/* The local peer and the first connection of its pool; the node is up. */
int krc_loopback_start(void)
{
	struct krc_peer *peer;
	struct krc_conn *conn;

	peer = krc_peer_get(krc_node.card.gid, true);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	krc_peer_set_card(peer, &krc_node.card);
	WRITE_ONCE(krc_self_peer, peer);
	conn = krc_loopback_connect();
	if (IS_ERR(conn))
		return PTR_ERR(conn);
	krc_conn_put(conn);
	return 0;
}

/* After krc_peers_drop_all(): the last reference of ours. */
void krc_loopback_stop(void)
{
	struct krc_peer *peer = krc_self_peer;

	WRITE_ONCE(krc_self_peer, NULL);
	krc_peer_put(peer);
}
