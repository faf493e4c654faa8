// SPDX-License-Identifier: GPL-2.0
/*
 * A positive control for the debug kernel of 'make test-debug': loading
 * this module with what=NAME commits one bug that the kernel's bug finders
 * report, so that scripts/debug-kernel.sh selftest can check that the
 * node's log scan fails on each kind of report. Never load it elsewhere.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>

static char *what = "none";
module_param(what, charp, 0444);
MODULE_PARM_DESC(what, "leak, kasan, lockdep or sleep");

static DEFINE_MUTEX(krc_st_a);
static DEFINE_MUTEX(krc_st_b);
static DEFINE_SPINLOCK(krc_st_spin);
static void *krc_st_ptr;

static noinline void krc_st_leak(void)
{
	/* The only pointer is overwritten: kmemleak must report it. */
	krc_st_ptr = kmalloc(200, GFP_KERNEL);
	krc_st_ptr = NULL;
}

static noinline void krc_st_kasan(void)
{
	char *p = kmalloc(16, GFP_KERNEL);

	if (!p)
		return;
	/* One byte past the end of the object. */
	pr_info("krc_dbg_selftest: read %d\n", READ_ONCE(p[16]));
	kfree(p);
}

static noinline void krc_st_lockdep(void)
{
	/* A then B, later B then A: lockdep reports a possible deadlock. */
	mutex_lock(&krc_st_a);
	mutex_lock(&krc_st_b);
	mutex_unlock(&krc_st_b);
	mutex_unlock(&krc_st_a);
	mutex_lock(&krc_st_b);
	mutex_lock(&krc_st_a);
	mutex_unlock(&krc_st_a);
	mutex_unlock(&krc_st_b);
}

static noinline void krc_st_sleep(void)
{
	/* An allocation that may sleep, under a spinlock. */
	spin_lock(&krc_st_spin);
	krc_st_ptr = kmalloc(64, GFP_KERNEL);
	spin_unlock(&krc_st_spin);
	kfree(krc_st_ptr);
	krc_st_ptr = NULL;
}

static int __init krc_st_init(void)
{
	if (!strcmp(what, "leak"))
		krc_st_leak();
	else if (!strcmp(what, "kasan"))
		krc_st_kasan();
	else if (!strcmp(what, "lockdep"))
		krc_st_lockdep();
	else if (!strcmp(what, "sleep"))
		krc_st_sleep();
	return 0;
}

static void __exit krc_st_exit(void)
{
}

module_init(krc_st_init);
module_exit(krc_st_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("krcore: bugs on purpose, to check the debug kernel's log scan");
