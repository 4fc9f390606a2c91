#include "runtime/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"

/* What a scrape waits for a fresh text, at most (the reader renders at its
 * next look at the ring buffer: within 100 ms when it keeps up). */
#define FRESH_WAIT_NS (500 * 1000000ll)

struct ut_metrics {
	struct MHD_Daemon *daemon;
	int fd;
	char address[128];
	pthread_mutex_t lock;
	pthread_cond_t published;
	char *text;          /* the latest render */
	size_t len;
	uint64_t renders;    /* how many were published */
	bool wanted;         /* a scrape waits for the next one */
};

static const char INDEX[] = "uring-trace: the metrics are at /metrics\n";
static const char CONTENT_TYPE[] = "text/plain; version=0.0.4; charset=utf-8";

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *type, void *body, size_t len,
			     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	enum MHD_Result rc = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* The latest text, after asking the reader for a fresh one and waiting for
 * it a while. */
static char *fresh_text(struct ut_metrics *m, size_t *len)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += FRESH_WAIT_NS;
	until.tv_sec += until.tv_nsec / 1000000000;
	until.tv_nsec %= 1000000000;
	pthread_mutex_lock(&m->lock);
	uint64_t seen = m->renders;
	m->wanted = true;
	while (m->renders == seen && pthread_cond_timedwait(&m->published, &m->lock, &until) == 0)
		;
	char *copy = NULL;
	if (m->text) {
		copy = xmalloc(m->len ? m->len : 1);
		memcpy(copy, m->text, m->len);
		*len = m->len;
	}
	pthread_mutex_unlock(&m->lock);
	return copy;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_len, void **state)
{
	struct ut_metrics *m = cls;
	(void)version, (void)upload;
	if (*upload_len)   /* GET and HEAD take no body: read none */
		return MHD_NO;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", (void *)"GET only\n", 9, MHD_RESPMEM_PERSISTENT);
	if (!*state) {   /* the headers came: answer at the next call, as libmicrohttpd asks */
		*state = m;
		return MHD_YES;
	}
	if (strcmp(url, "/") == 0)
		return reply(conn, MHD_HTTP_OK, "text/plain", (void *)INDEX, sizeof(INDEX) - 1, MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics") != 0)
		return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", (void *)"not found: see /metrics\n", 24,
			     MHD_RESPMEM_PERSISTENT);
	size_t len = 0;
	char *text = fresh_text(m, &len);
	if (!text)
		return reply(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", (void *)"not tracing yet\n", 16,
			     MHD_RESPMEM_PERSISTENT);
	return reply(conn, MHD_HTTP_OK, CONTENT_TYPE, text, len, MHD_RESPMEM_MUST_FREE);
}

/* where as a host and a port: "9090", ":9090" (localhost), "ADDR:PORT",
 * "[V6ADDR]:PORT". */
static bool split_address(const char *where, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(where, ':');
	const char *p = colon ? colon + 1 : where;
	if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 || atoi(p) < 1 || atoi(p) > 65535)
		return false;
	snprintf(port, plen, "%s", p);
	size_t n = colon ? (size_t)(colon - where) : 0;
	if (n >= 2 && where[0] == '[' && where[n - 1] == ']') {
		where++;
		n -= 2;
	}
	if (n >= hlen)
		return false;
	if (n)
		snprintf(host, hlen, "%.*s", (int)n, where);
	else
		snprintf(host, hlen, "127.0.0.1");
	return true;
}

/* A listening socket on where; -1 with why. */
static int listen_on(const char *where, char *address, size_t alen, char *why, size_t len)
{
	char host[100], port[8];
	if (!split_address(where, host, sizeof(host), port, sizeof(port))) {
		snprintf(why, len, "--metrics %s: give PORT, or ADDR:PORT (e.g. 9090, 0.0.0.0:9090, [::1]:9090)", where);
		return -1;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV},
			*res = NULL;
	int rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0) {
		snprintf(why, len, "--metrics %s: %s", where, gai_strerror(rc));
		return -1;
	}
	int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 16) != 0) {
		int err = errno;
		snprintf(why, len, "--metrics %s: cannot listen on %s port %s: %s%s", where, host, port, strerror(err),
			 err == EADDRINUSE ? " (another exporter or uring-trace has it: choose another port)" : "");
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return -1;
	}
	snprintf(address, alen, "%s%s%s:%s", res->ai_family == AF_INET6 ? "[" : "", host,
		 res->ai_family == AF_INET6 ? "]" : "", port);
	freeaddrinfo(res);
	return fd;
}

struct ut_metrics *ut_metrics_start(const char *where, char *why, size_t len)
{
	struct ut_metrics *m = xcalloc(1, sizeof(*m));
	m->fd = listen_on(where, m->address, sizeof(m->address), why, len);
	if (m->fd < 0) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->published, NULL);
	/* the server's thread takes no signal: they are the session's */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	m->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, answer, m,
				     MHD_OPTION_LISTEN_SOCKET, m->fd, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)5,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)32, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				     (unsigned)8, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!m->daemon) {
		snprintf(why, len, "--metrics %s: the HTTP server (libmicrohttpd) did not start", where);
		close(m->fd);
		pthread_mutex_destroy(&m->lock);
		pthread_cond_destroy(&m->published);
		free(m);
		return NULL;
	}
	return m;
}

const char *ut_metrics_address(const struct ut_metrics *m)
{
	return m->address;
}

bool ut_metrics_wanted(struct ut_metrics *m)
{
	pthread_mutex_lock(&m->lock);
	bool wanted = m->wanted;
	pthread_mutex_unlock(&m->lock);
	return wanted;
}

void ut_metrics_publish(struct ut_metrics *m, const char *text, size_t len)
{
	char *copy = xmalloc(len ? len : 1);
	memcpy(copy, text, len);
	pthread_mutex_lock(&m->lock);
	free(m->text);
	m->text = copy;
	m->len = len;
	m->renders++;
	m->wanted = false;
	pthread_cond_broadcast(&m->published);
	pthread_mutex_unlock(&m->lock);
}

void ut_metrics_stop(struct ut_metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->daemon);
	close(m->fd);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->published);
	free(m->text);
	free(m);
}
