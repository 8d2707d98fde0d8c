/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The record store: tokens, the by-iocb hash, the recycle list; it calls
 * nothing of the emulation.  Chunks are never freed, so a stale token
 * still points at a record (its generation tells whether it is the same
 * poll), and come from mmap so that a signal handler may add one.
 */
#include "config.h"

#include <sys/mman.h>

#include "poll_rec.h"
#include "raw_syscall.h"

#define CHUNK_SHIFT	8
#define CHUNK_RECS	(1u << CHUNK_SHIFT)
#define MAX_CHUNKS	4096u		/* a million polls armed at once */
#define HASH_SIZE	256u

static struct poll_rec *chunks[MAX_CHUNKS];
/* Written under the lock, read by reapers without it: release/acquire,
 * the chunk and its records' idx are set before the count. */
static _Atomic unsigned nchunks;
static struct poll_rec *free_list;
static struct poll_rec *hash[HASH_SIZE];
static unsigned long live;		/* records not free */
unsigned long aioreap_rec_armed;
/* Claimed records awaiting the lock: push and take-all only, so no ABA. */
static struct poll_rec *_Atomic recycle_head;

helper_code static unsigned hash_of(const struct iocb *cb)
{
	uint64_t h = (uint64_t)((uintptr_t)cb >> 6) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 56) & (HASH_SIZE - 1);
}

helper_code uint64_t aioreap_rec_token(const struct poll_rec *r)
{
	return (uint64_t)r->gen << 32 | r->idx;
}

helper_code struct poll_rec *aioreap_rec_at(uint64_t token)
{
	uint32_t idx = (uint32_t)token;
	unsigned n = atomic_load_explicit(&nchunks, memory_order_acquire);

	if (idx >= n * CHUNK_RECS)
		return NULL;
	return &chunks[idx >> CHUNK_SHIFT][idx & (CHUNK_RECS - 1)];
}

helper_code struct poll_rec *aioreap_rec_by_token(uint64_t token)
{
	struct poll_rec *r = aioreap_rec_at(token);

	if (!r || r->gen != (uint32_t)(token >> 32) ||
	    rec_state(r) == REC_FREE)
		return NULL;
	return r;
}

helper_code struct poll_rec *aioreap_rec_alloc(void)
{
	struct poll_rec *r;

	if (!free_list) {
		unsigned n = atomic_load_explicit(&nchunks,
						  memory_order_relaxed), i;
		struct poll_rec *c;
		long a;

		if (n == MAX_CHUNKS)
			return NULL;
		a = sys_mmap0(CHUNK_RECS * sizeof(*c), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1);
		if (a < 0 && a > -4096)
			return NULL;
		c = (struct poll_rec *)a;	/* zero-filled: FREE, gen 0 */
		for (i = CHUNK_RECS; i-- > 0;) {
			c[i].idx = n * CHUNK_RECS + i;
			c[i].fd = -1;
			c[i].qnext = free_list;
			free_list = &c[i];
		}
		chunks[n] = c;
		atomic_store_explicit(&nchunks, n + 1, memory_order_release);
	}
	r = free_list;
	free_list = r->qnext;
	r->qnext = NULL;
	r->gen++;
	rec_set(r, REC_FREE);	/* the new generation, still free */
	r->fd = -1;
	r->fd_programs = 0;
	r->async = 0;
	r->nowait = 0;
	r->kfd = -1;
	r->kresfd = -1;
	r->err = 0;
	r->iov = NULL;
	r->iov_map = 0;
	live++;
	return r;
}

helper_code void aioreap_rec_hash_insert(struct poll_rec *r)
{
	unsigned h = hash_of(r->user);

	r->hnext = hash[h];
	hash[h] = r;
}

helper_code static void hash_remove(struct poll_rec *r)
{
	struct poll_rec **p = &hash[hash_of(r->user)];

	while (*p && *p != r)
		p = &(*p)->hnext;
	if (*p)
		*p = r->hnext;
	r->hnext = NULL;
}

helper_code struct poll_rec *aioreap_rec_hash_first(const struct iocb *cb)
{
	return hash[hash_of(cb)];
}

helper_code void aioreap_rec_release(struct poll_rec *r)
{
	if (r->iov_map)
		sys_munmap(r->iov, r->iov_map);
	r->iov_map = 0;
	aioreap_rec_close_dups(r);
	hash_remove(r);
	rec_set(r, REC_FREE);
	r->qnext = free_list;
	free_list = r;
	live--;
}

helper_code struct poll_rec *aioreap_rec_each(unsigned *pos)
{
	unsigned n = atomic_load_explicit(&nchunks, memory_order_relaxed);

	while (live && *pos < n * CHUNK_RECS) {
		unsigned i = (*pos)++;
		struct poll_rec *r =
			&chunks[i >> CHUNK_SHIFT][i & (CHUNK_RECS - 1)];

		if (rec_state(r) != REC_FREE)
			return r;
	}
	return NULL;
}

helper_code void aioreap_rec_recycle_push(struct poll_rec *r)
{
	struct poll_rec *old = atomic_load_explicit(&recycle_head,
						    memory_order_relaxed);

	/* Release: the record's link is visible to whoever takes it. */
	do
		r->rnext = old;
	while (!atomic_compare_exchange_weak_explicit(
		&recycle_head, &old, r, memory_order_release,
		memory_order_relaxed));
}

/* Acquire: pairs with each push's release (the links, the claims). */
helper_code struct poll_rec *aioreap_rec_recycle_take(void)
{
	if (!atomic_load_explicit(&recycle_head, memory_order_relaxed))
		return NULL;
	return atomic_exchange_explicit(&recycle_head, NULL,
					memory_order_acquire);
}

helper_code void aioreap_rec_recycle_forget(void)
{
	atomic_store_explicit(&recycle_head, NULL, memory_order_relaxed);
}

helper_code unsigned long aioreap_rec_live(void)
{
	return live;
}
