// SPDX-License-Identifier: GPL-2.0
/*
 * key.c - the cluster key: the secret every node of a cluster shares, so
 * that only a node's kernel can register, update or remove its card at
 * the MetaServer (common/auth.h, docs/trust-model.md).
 *
 * It is read once, when the control plane starts, from the file named by
 * key_file (default /etc/krcore/cluster.key): 64 hex digits, owned by
 * root, readable by no one else. A file others may read or write, or that
 * root does not own, is refused: a secret anyone can read is no secret.
 * Without a key the node still works on its own and over connections to
 * nodes it already knows, but can neither register with a MetaServer nor
 * (when it hosts one) accept a member.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include "control/control.h"
#include "auth.h"

static char *krc_param_key_file = "/etc/krcore/cluster.key";
module_param_named(key_file, krc_param_key_file, charp, 0444);
MODULE_PARM_DESC(key_file,
		 "The cluster key: a file of 64 hex digits, owned by root and readable by no one else, the same on every node (default /etc/krcore/cluster.key)");

static u8 krc_key_bytes[KRC_KEY_LEN];
static bool krc_key_loaded;

/* The cluster key, or NULL if none was loaded. */
const u8 *krc_key(void)
{
	return READ_ONCE(krc_key_loaded) ? krc_key_bytes : NULL;
}

static int krc_key_read(const char *path, u8 key[KRC_KEY_LEN])
{
	struct inode *inode;
	struct file *f;
	loff_t pos = 0;
	char *text;
	ssize_t n;
	int ret;

	f = filp_open(path, O_RDONLY | O_NOFOLLOW, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	inode = file_inode(f);
	if (!S_ISREG(inode->i_mode)) {
		ret = -EINVAL;
		goto out;
	}
	if (!uid_eq(inode->i_uid, GLOBAL_ROOT_UID) || (inode->i_mode & 0077)) {
		ret = -EACCES;
		goto out;
	}
	text = kzalloc(KRC_KEY_FILE_MAX + 1, GFP_KERNEL);
	if (!text) {
		ret = -ENOMEM;
		goto out;
	}
	n = kernel_read(f, text, KRC_KEY_FILE_MAX + 1, &pos);
	ret = n < 0 ? n : krc_key_parse(text, n, key);
	kfree_sensitive(text);
out:
	filp_close(f, NULL);
	return ret;
}

/* Load the key (control plane start); 0, or why there is none. */
int krc_key_load(void)
{
	const char *path = krc_param_key_file;
	u8 key[KRC_KEY_LEN];
	int ret;

	WRITE_ONCE(krc_key_loaded, false);
	if (!path || !*path) {
		pr_warn("krcore: no cluster key (key_file is empty): this node can neither register with a MetaServer nor accept members\n");
		return -ENOKEY;
	}
	ret = krc_key_read(path, key);
	if (ret) {
		pr_warn("krcore: no cluster key from %s (%d%s): this node can neither register with a MetaServer nor accept members\n",
			path, ret, ret == -EACCES ?
			": it must be owned by root and readable by no one else" :
			ret == -EINVAL ? ": it must hold 64 hex digits" : "");
		return ret;
	}
	memcpy(krc_key_bytes, key, KRC_KEY_LEN);
	memzero_explicit(key, sizeof(key));
	WRITE_ONCE(krc_key_loaded, true);
	return 0;
}

/* Forget the key (control plane stop). */
void krc_key_forget(void)
{
	WRITE_ONCE(krc_key_loaded, false);
	memzero_explicit(krc_key_bytes, sizeof(krc_key_bytes));
}
