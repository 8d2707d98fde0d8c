/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target: the user-space ring reader, ring_reap() of
 * src/reap.h, over a synthetic ring built from the fuzzer's bytes.
 *
 * The ring is placed so that its last slot ends exactly where a PROT_NONE
 * guard page begins: a read past the slots faults at once, and ASan
 * catches any write past the caller's event array (allocated with malloc,
 * exactly max events long).  A copy of the ring taken before the call is
 * the model the result is checked against:
 *  - the result is -1 or 0..min(available, max);
 *  - a bad magic or incompat_features, or head/tail outside the cached
 *    nr, gives -1 (untrusted) and leaves head alone;
 *  - a head other than where the entry says the library left it gives
 *    -2 (a reap the library did not make) and leaves head alone;
 *  - otherwise head moves forward by exactly the count, modulo the cached
 *    nr, the entry's record of it follows, and every event returned is
 *    the slot it should be;
 *  - nothing but head is ever written (id, nr, tail, magic, the features,
 *    header_length and the slots themselves).
 *
 * Input layout (little-endian, short inputs are zero-padded):
 *   0   u32 id, nr (the ring's own word), head, tail, magic,
 *       compat_features, incompat_features, header_length
 *   32  u16 cached nr - 1, modulo 8320 (the size the registry took at
 *       io_setup; the kernel's ring for io_setup(4096) has 8319 slots)
 *   34  i32 max (the caller's event count; clamped to 70000 for memory)
 *   38  u8 flags: bit 0 = force magic valid, bit 1 = force incompat 0,
 *       bit 2 = reduce head and tail modulo the cached nr (so in-range
 *       rings are common, not one in 2^32), bit 3 = the entry's record of
 *       head is the input's id word modulo the cached nr instead of head
 *       itself (a reap outside the library moved it)
 *   39  the slots' contents, repeated as far as they go
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reap.h"
#include "ring.h"

#define PAGE 4096u
#define MAX_NR 8320u
#define MAX_EVENTS 10000L
/* One mapping for the whole run (a fresh one per input costs more than
 * the reap): data pages, then the PROT_NONE guard page. */
#define MAP_DATA ((AIO_RING_HEADER_LEN + MAX_NR * 32 + PAGE - 1) / PAGE * PAGE)

static unsigned char *map;

static uint32_t get32(const uint8_t *d, size_t size, size_t off)
{
	uint32_t v = 0;
	size_t i;

	for (i = 0; i < 4; i++)
		if (off + i < size)
			v |= (uint32_t)d[off + i] << (8 * i);
	return v;
}

#define CHECK(cond) do {						\
		if (!(cond)) {						\
			fprintf(stderr, "invariant failed: %s (line %d)\n", \
				#cond, __LINE__);			\
			abort();					\
		}							\
	} while (0)

/* The ring, mapped once: its last slot ends where the guard page begins. */
static struct aio_ring *ring_at_guard(size_t ring_bytes)
{
	if (!map) {
		void *p = mmap(NULL, MAP_DATA + PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED ||
		    mprotect((unsigned char *)p + MAP_DATA, PAGE, PROT_NONE) != 0)
			abort();
		map = p;
	}
	return (struct aio_ring *)(map + MAP_DATA - ring_bytes);
}

/* Header words straight from the input, then what the flags force. */
static void fill_header(struct aio_ring *r, const uint8_t *data, size_t size,
			unsigned cached_nr, unsigned flags)
{
	unsigned i;

	for (i = 0; i < 8; i++) {
		uint32_t w = get32(data, size, 4 * i);

		memcpy((unsigned char *)r + 4 * i, &w, 4);
	}
	if (flags & 1)
		r->magic = AIO_RING_MAGIC;
	if (flags & 2)
		r->incompat_features = 0;
	if (flags & 4) {
		atomic_store_explicit(&r->head, atomic_load(&r->head) % cached_nr,
				      memory_order_relaxed);
		atomic_store_explicit(&r->tail, atomic_load(&r->tail) % cached_nr,
				      memory_order_relaxed);
	}
}

/* Slots: the remaining input repeated, each slot also stamped with its
 * index so that a copy from the wrong slot shows. */
static void fill_slots(struct aio_ring *r, const uint8_t *data, size_t size,
		       unsigned cached_nr)
{
	unsigned char *slots = (unsigned char *)r->events;
	size_t n = size > 39 ? size - 39 : 0, off = 0;
	size_t total = (size_t)cached_nr * 32;
	unsigned i;

	if (n == 0)
		memset(slots, 0, total);
	if (n) {
		/* The input once, then the filled part doubled. */
		off = n < total ? n : total;
		memcpy(slots, data + 39, off);
		while (off < total) {
			size_t c = total - off < off ? total - off : off;

			memcpy(slots + off, slots, c);
			off += c;
		}
	}
	for (i = 0; i < cached_nr; i++)
		r->events[i].res2 ^= (long long)i << 32;
}

/* What one reap was given, and what it answered. */
struct outcome {
	const struct aio_ring *model;	/* the ring before the reap */
	unsigned cached_nr, head, tail, seen;
	long ret, room;
};

/* The reap's answer against the model taken before it. */
static void check_outcome(const struct aio_ring *r, struct ctx_entry *e,
			  const struct io_event *ev, const struct outcome *o)
{
	const struct aio_ring *model = o->model;
	unsigned cached_nr = o->cached_nr, head = o->head, tail = o->tail;
	unsigned seen = o->seen, avail = 0, i;
	long ret = o->ret;
	int in_range, header_good;

	/* The ring's nr word must also match the size cached at io_setup. */
	header_good = model->magic == AIO_RING_MAGIC &&
		      model->incompat_features == 0 && model->nr == cached_nr;
	in_range = head < cached_nr && tail < cached_nr;
	if (in_range)
		avail = tail >= head ? tail - head : cached_nr - head + tail;

	/* Never written: everything but head. */
	CHECK(r->id == model->id);
	CHECK(r->nr == model->nr);
	CHECK(atomic_load(&r->tail) == tail);
	CHECK(r->magic == model->magic);
	CHECK(r->compat_features == model->compat_features);
	CHECK(r->incompat_features == model->incompat_features);
	CHECK(r->header_length == model->header_length);
	CHECK(memcmp(r->events, model->events, (size_t)cached_nr * 32) == 0);

	CHECK(ret >= -2);
	if (ret == -1 || !header_good || !in_range) {
		/* Refused: must be -1 exactly when the ring is untrusted. */
		CHECK(ret == -1);
		CHECK(!header_good || !in_range);
		CHECK(atomic_load(&r->head) == head);
	} else if (ret == -2 || head != seen) {
		/* Refused: head is not where the library left it. */
		CHECK(ret == -2);
		CHECK(head != seen);
		CHECK(atomic_load(&r->head) == head);
		CHECK(atomic_load(&e->head_seen) == seen);
	} else {
		CHECK(ret <= (long)avail && ret <= o->room);
		/* Progress: something is taken when something is there and
		 * fits (the reaper today takes all of it). */
		CHECK(ret > 0 || avail == 0 || o->room == 0);
		CHECK(atomic_load(&r->head) == (head + (unsigned)ret) % cached_nr);
		CHECK(atomic_load(&e->head_seen) == atomic_load(&r->head));
		for (i = 0; i < (unsigned)ret; i++)
			CHECK(memcmp(&ev[i], &model->events[(head + i) % cached_nr],
				     sizeof(*ev)) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned cached_nr = (get32(data, size, 32) & 0xffff) % MAX_NR + 1;
	long max = (int32_t)get32(data, size, 34);
	unsigned flags = get32(data, size, 38) & 0xff;
	size_t ring_bytes = AIO_RING_HEADER_LEN + (size_t)cached_nr * 32;
	struct aio_ring *r, *model;
	struct outcome o = { .cached_nr = cached_nr };
	struct ctx_entry e;
	struct io_event *ev;
	enum ring_look look;

	if (max > MAX_EVENTS)
		max = MAX_EVENTS;
	r = ring_at_guard(ring_bytes);
	fill_header(r, data, size, cached_nr, flags);
	fill_slots(r, data, size, cached_nr);

	model = malloc(ring_bytes);
	if (!model)
		abort();
	memcpy(model, r, ring_bytes);
	o.model = model;

	o.room = max > 0 ? max : 0;
	ev = malloc(o.room ? (size_t)o.room * sizeof(*ev) : 1);
	if (!ev)
		abort();

	o.head = atomic_load(&model->head);
	o.tail = atomic_load(&model->tail);
	o.seen = flags & 8 ? model->id % cached_nr : o.head;
	atomic_init(&e.key, (uintptr_t)r);
	atomic_init(&e.state, ST_EXCL);	/* as if the reap lock were held */
	atomic_init(&e.head_seen, o.seen);
	e.nr = cached_nr;

	o.ret = 12345;	/* a refused ring must still report 0 taken */
	look = ring_reap(&e, ev, max, &o.ret);
	if (look != RING_READY) {
		CHECK(o.ret == 0);
		o.ret = look == RING_UNTRUSTED ? -1 : -2;	/* the model's names */
	}
	check_outcome(r, &e, ev, &o);

	free(ev);
	free(model);
	return 0;
}
