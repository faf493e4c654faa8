// SPDX-License-Identifier: GPL-2.0
/*
 * kmem.c - kernel memory that peers reach with one-sided requests: the
 * MetaServer's table (meta_host.c) and remote memory regions
 * (data/lmr_host.c).
 *
 * Memory is taken in physically contiguous chunks (2 MiB when possible,
 * smaller when memory is fragmented), zeroed, mapped for the device and
 * registered once with one fast-registration MR whose pages are the
 * chunks, so a region needs no more MR entries than the device's page
 * list allows (512 on rxe: 1 GiB). The MR covers exactly the bytes asked
 * for, not the rest of the last chunk. Deregistering the MR makes its key
 * useless at once; the chunks are freed after it.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "control/control.h"

#define KRC_KMEM_MAX_ORDER	9	/* 2 MiB chunks */

/* Deregister the MR: its key is useless from now on; the memory stays. */
void krc_kmem_revoke(struct krc_kmem *km)
{
	if (km->mr) {
		ib_dereg_mr(km->mr);
		krc_obj_destroyed(KRC_OBJ_MR);
		km->mr = NULL;
	}
}

void krc_kmem_free(struct krc_kmem *km)
{
	u32 i;

	krc_kmem_revoke(km);
	if (km->sg_mapped)
		ib_dma_unmap_sg(km->ibdev, km->sgt.sgl, km->nchunks,
				DMA_BIDIRECTIONAL);
	sg_free_table(&km->sgt);
	for (i = 0; i < km->nchunks; i++)
		if (km->chunks[i])
			__free_pages(km->chunks[i], km->order);
	kfree(km->chunks);
	memset(km, 0, sizeof(*km));
}

/* The bytes krc_kmem_alloc() takes for @bytes at most (its charge). */
u64 krc_kmem_charge(u64 bytes)
{
	unsigned int order = min_t(unsigned int, get_order(bytes),
				   KRC_KMEM_MAX_ORDER);

	return round_up(bytes, PAGE_SIZE << order);
}

static int krc_kmem_chunks(struct krc_kmem *km, u64 bytes, u32 max_sg)
{
	int order;
	u32 i;

	for (order = min_t(int, get_order(bytes), KRC_KMEM_MAX_ORDER);
	     order >= 0; order--) {
		u64 chunk = PAGE_SIZE << order;
		gfp_t gfp = GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN;

		if (order)
			gfp |= __GFP_NORETRY;
		if (DIV_ROUND_UP_ULL(bytes, chunk) > max_sg)
			return -E2BIG;
		km->nchunks = DIV_ROUND_UP_ULL(bytes, chunk);
		km->order = order;
		km->chunks = kvcalloc(km->nchunks, sizeof(*km->chunks),
				      GFP_KERNEL);
		if (!km->chunks)
			return -ENOMEM;
		for (i = 0; i < km->nchunks; i++) {
			km->chunks[i] = alloc_pages(gfp, order);
			if (!km->chunks[i])
				break;
			cond_resched();
		}
		if (i == km->nchunks)
			return 0;
		for (i = 0; i < km->nchunks && km->chunks[i]; i++)
			__free_pages(km->chunks[i], order);
		kvfree(km->chunks);
		km->chunks = NULL;
		km->nchunks = 0;
	}
	return -ENOMEM;
}

/*
 * @bytes of zeroed memory registered with @access (IB_ACCESS_*), which
 * peers address from @iova (KRC_KMEM_IOVA_DMA: the DMA address of its
 * first byte). 0, -E2BIG (more chunks than the device registers at
 * once), -ENOMEM, -ENODEV or the registration's error; on error
 * nothing is left to free. Process context, under krc_node_enter() or
 * the node's lock.
 */
int krc_kmem_alloc(struct krc_kmem *km, u64 bytes, int access, u64 iova)
{
	struct scatterlist *sg;
	u32 i;
	int ret;

	memset(km, 0, sizeof(*km));
	if (!krc_node.dev)
		return -ENODEV;
	km->ibdev = krc_node.dev->ibdev;
	ret = krc_kmem_chunks(km, bytes,
			      km->ibdev->attrs.max_fast_reg_page_list_len);
	if (ret)
		return ret;
	ret = -ENOMEM;
	if (sg_alloc_table(&km->sgt, km->nchunks, GFP_KERNEL))
		goto err;
	/* The last entry ends where @bytes do: so does the MR, to the byte. */
	for_each_sg(km->sgt.sgl, sg, km->nchunks, i)
		sg_set_page(sg, km->chunks[i], i + 1 < km->nchunks ?
			    PAGE_SIZE << km->order :
			    bytes - ((u64)i << (PAGE_SHIFT + km->order)), 0);
	if (ib_dma_map_sg(km->ibdev, km->sgt.sgl, km->nchunks,
			  DMA_BIDIRECTIONAL) != km->nchunks)
		goto err;
	km->sg_mapped = true;
	if (iova == KRC_KMEM_IOVA_DMA)
		iova = sg_dma_address(km->sgt.sgl);
	km->mr = krc_node_reg_mr(km->sgt.sgl, km->nchunks,
				 PAGE_SIZE << km->order, access, iova);
	if (IS_ERR(km->mr)) {
		ret = PTR_ERR(km->mr);
		km->mr = NULL;
		goto err;
	}
	return 0;
err:
	krc_kmem_free(km);
	return ret;
}

/*
 * One more registration of the same memory, with @access from @iova (a
 * name's key, data/lmr_name_host.c): the memory must be allocated and stay so
 * until the MR is deregistered. ERR_PTR on error.
 */
struct ib_mr *krc_kmem_reg(struct krc_kmem *km, int access, u64 iova)
{
	if (!km->sg_mapped)
		return ERR_PTR(-ENODEV);
	return krc_node_reg_mr(km->sgt.sgl, km->nchunks, PAGE_SIZE << km->order,
			       access, iova);
}

/* Deregister what krc_kmem_reg() registered: its key is useless now. */
void krc_kmem_unreg(struct ib_mr *mr)
{
	ib_dereg_mr(mr);
	krc_obj_destroyed(KRC_OBJ_MR);
}

/* Set @len bytes from @off (inside the memory) to @value, by the CPU. */
void krc_kmem_set(struct krc_kmem *km, u64 off, u64 len, u8 value)
{
	unsigned int shift = PAGE_SHIFT + km->order;
	u64 chunk = 1ULL << shift;

	while (len) {
		u64 in = off & (chunk - 1);
		u64 n = min(len, chunk - in);

		memset(page_address(km->chunks[off >> shift]) + in, value, n);
		off += n;
		len -= n;
		cond_resched();
	}
}

static void *krc_kmem_at(struct krc_kmem *km, u64 off)
{
	unsigned int shift = PAGE_SHIFT + km->order;

	return page_address(km->chunks[off >> shift]) +
	       (off & ((1ULL << shift) - 1));
}

/*
 * Copy @len bytes from @soff of @src to @doff of @dst (both inside their
 * memory; @dst may be @src, the ranges may overlap: as memmove), by the
 * CPU, a piece inside one chunk of each at a time.
 */
void krc_kmem_copy(struct krc_kmem *dst, u64 doff, struct krc_kmem *src,
		   u64 soff, u64 len)
{
	u64 dchunk = PAGE_SIZE << dst->order, schunk = PAGE_SIZE << src->order;
	bool back = dst == src && doff > soff && doff < soff + len;
	u64 n;

	while (len) {
		if (back) {
			/* from the end: the bytes before doff + len, soff + len */
			n = min3(len, ((doff + len - 1) & (dchunk - 1)) + 1,
				 ((soff + len - 1) & (schunk - 1)) + 1);
			memmove(krc_kmem_at(dst, doff + len - n),
				krc_kmem_at(src, soff + len - n), n);
		} else {
			n = min3(len, dchunk - (doff & (dchunk - 1)),
				 schunk - (soff & (schunk - 1)));
			memmove(krc_kmem_at(dst, doff), krc_kmem_at(src, soff), n);
			doff += n;
			soff += n;
		}
		len -= n;
		cond_resched();
	}
}

/* The chunks mapped contiguously for the CPU (vunmap() it), or NULL. */
void *krc_kmem_vmap(struct krc_kmem *km)
{
	u32 npages = km->nchunks << km->order, i, k;
	struct page **pages;
	void *p;

	pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return NULL;
	for (i = 0; i < km->nchunks; i++)
		for (k = 0; k < (1U << km->order); k++)
			pages[(i << km->order) + k] = km->chunks[i] + k;
	p = vmap(pages, npages, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	return p;
}
