// SPDX-License-Identifier: BSD-2-Clause
/*
 * vq.c - open and close virtual queues, error reporting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

static __thread char krc_errbuf[256];

int krcl_fail(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(krc_errbuf, sizeof(krc_errbuf), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(krc_errbuf) - 4)
		snprintf(krc_errbuf + n, sizeof(krc_errbuf) - (size_t)n,
			 " (%s)", strerror(-err));
	return err;
}

const char *krc_errmsg(void)
{
	return krc_errbuf;
}

int krcl_ioctl(const struct krc_vq *vq, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(vq->fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : ret;
}

/* What the first open read (krc_vq_open); @checked once it is there. */
static struct krcore_version module_version;
static int checked;

int krc_vq_open(struct krc_vq **vqp)
{
	struct krc_vq *vq;
	int ret;

	*vqp = NULL;
	vq = calloc(1, sizeof(*vq));
	if (!vq)
		return krcl_fail(-ENOMEM, "out of memory");
	vq->fd = open(KRCORE_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (vq->fd < 0) {
		ret = -errno;
		free(vq);
		if (ret == -ENOENT || ret == -ENXIO || ret == -ENODEV)
			return krcl_fail(ret, "%s: krcore.ko is not loaded (modprobe krcore)",
					KRCORE_DEVICE_PATH);
		if (ret == -EACCES || ret == -EPERM)
			return krcl_fail(ret, "%s: permission denied (root or the device's group)",
					KRCORE_DEVICE_PATH);
		return krcl_fail(ret, "%s: cannot open", KRCORE_DEVICE_PATH);
	}
	/*
	 * The module's ABI, checked at this process's first open: one
	 * system call less for every later VQ (a module reloaded under a
	 * running process is not looked at again).
	 */
	if (__atomic_load_n(&checked, __ATOMIC_ACQUIRE)) {
		vq->version = module_version;
		*vqp = vq;
		return 0;
	}
	ret = krcl_ioctl(vq, KRCORE_IOC_VERSION, &vq->version);
	if (ret < 0) {
		close(vq->fd);
		free(vq);
		if (ret == -ENOTTY)
			return krcl_fail(-EPROTO, "%s is not krcore (no ABI query)",
					KRCORE_DEVICE_PATH);
		return krcl_fail(ret, "%s: ABI version query failed", KRCORE_DEVICE_PATH);
	}
	vq->version.module_version[sizeof(vq->version.module_version) - 1] = '\0';
	if (vq->version.abi_version < KRC_LIB_ABI_VERSION) {
		ret = krcl_fail(-EPROTO, "krcore.ko %s has ABI %u < %u: too old",
				vq->version.module_version,
				vq->version.abi_version, KRC_LIB_ABI_VERSION);
		close(vq->fd);
		free(vq);
		return ret;
	}
	module_version = vq->version;
	__atomic_store_n(&checked, 1, __ATOMIC_RELEASE);
	*vqp = vq;
	return 0;
}

void krc_vq_close(struct krc_vq *vq)
{
	if (!vq)
		return;
	if (vq->rring_mem)
		munmap(vq->rring_mem, vq->rring_size);
	if (!vq->uring && vq->ring_mem)
		munmap(vq->ring_mem, vq->ring_size);
	close(vq->fd);
	krcl_ring_closed(vq);
	free(vq);
}

int krc_vq_fd(const struct krc_vq *vq)
{
	return vq->fd;
}

const struct krcore_ring *krc_vq_ring(const struct krc_vq *vq)
{
	return vq->ring;
}

const struct krcore_version *krc_vq_version(const struct krc_vq *vq)
{
	return &vq->version;
}
