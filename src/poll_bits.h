/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* POLL* bits to EPOLL* bits and back, for both ways of carrying a poll
 * through an epoll set (poll_carry.c, poll_helper.c). */
#ifndef LIBAIO_POLL_BITS_H
#define LIBAIO_POLL_BITS_H

#include <poll.h>
#include <sys/epoll.h>

/* POLL* and EPOLL* bits differ on some ABIs (POLLWRNORM on MIPS and
 * SPARC): rows of a POLL* bit and its EPOLL* bit. */
static const unsigned aioreap_poll_epoll_map[][2] = {
	{ POLLIN, EPOLLIN },		{ POLLPRI, EPOLLPRI },
	{ POLLOUT, EPOLLOUT },		{ POLLERR, EPOLLERR },
	{ POLLHUP, EPOLLHUP },		{ POLLRDNORM, EPOLLRDNORM },
	{ POLLRDBAND, EPOLLRDBAND },	{ POLLWRNORM, EPOLLWRNORM },
	{ POLLWRBAND, EPOLLWRBAND },	{ POLLMSG, EPOLLMSG },
	{ POLLRDHUP, EPOLLRDHUP },
};

/* POLL* bits to EPOLL* bits (to_epoll 1), or back (0). */
static inline unsigned poll_bits_translate(unsigned ev, int to_epoll)
{
	unsigned i, out = 0;

	for (i = 0; i < sizeof(aioreap_poll_epoll_map) /
			sizeof(*aioreap_poll_epoll_map); i++)
		if (ev & aioreap_poll_epoll_map[i][!to_epoll])
			out |= aioreap_poll_epoll_map[i][to_epoll];
	return out;
}

/* The POLL* bits a request is completed with: asking POLLIN (POLLOUT) is
 * asking for its POLLRDNORM (POLLWRNORM) twin too, which a file reports
 * beside it (the kernel's aio poll gives 0x41 for a pipe turning
 * readable); POLLERR and POLLHUP always. */
static inline unsigned poll_bits_woken_by(unsigned events)
{
	if (events & POLLIN)
		events |= POLLRDNORM;
	if (events & POLLOUT)
		events |= POLLWRNORM;
	return events | POLLERR | POLLHUP;
}

#endif /* LIBAIO_POLL_BITS_H */
