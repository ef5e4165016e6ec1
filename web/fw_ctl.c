/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <flowcut/fc_ctl.h>
#include "fw_ctl.h"

static int
fail(int rc, char *err, size_t errlen, const char *call, const char *path)
{
	snprintf(err, errlen, "%s %s: %s", call, path, strerror(-rc));
	return rc;
}

int
fw_ctl_answer(const char *path, char *ans, size_t n, json_t **doc, char *err, size_t errlen)
{
	json_error_t je;

	*doc = NULL;
	while (n > 0 && ans[n - 1] == '\n')
		ans[--n] = '\0';
	if (strncmp(ans, "ok ", 3) == 0 && (ans[3] == '{' || ans[3] == '[')) {
		*doc = json_loadb(ans + 3, n - 3, 0, &je);
		if (*doc != NULL)
			return 0;
		snprintf(err, errlen, "answer from %s: not JSON (%s at %d): %.60s", path, je.text,
			 je.position, ans + 3);
		return -EBADMSG;
	}
	if (strncmp(ans, "ok ", 3) == 0) {	/* an answer of text: cut-conn's, from before the JSON answers */
		*doc = json_stringn(ans + 3, n - 3);
		if (*doc != NULL)
			return 0;
		snprintf(err, errlen, "answer from %s: not UTF-8 text: %.60s", path, ans + 3);
		return -EBADMSG;
	}
	if (strncmp(ans, "error ", 6) == 0) {
		snprintf(err, errlen, "%s", ans + 6);
		return -EPROTO;
	}
	snprintf(err, errlen, "answer from %s: neither ok nor error: %.60s", path, ans);
	return -EBADMSG;
}

/* the one control request of this process in flight (fw_ctl.h) */
static pthread_mutex_t one = PTHREAD_MUTEX_INITIALIZER;

static int
take_turn(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += FW_CTL_TIMEOUT_MS / 1000;
	t.tv_nsec += (FW_CTL_TIMEOUT_MS % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return -pthread_mutex_clocklock(&one, CLOCK_MONOTONIC, &t);
}

int
fw_ctl_ask(const char *path, const char *secret, const char *req, json_t **doc, char *err,
	   size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {FW_CTL_TIMEOUT_MS / 1000, (FW_CTL_TIMEOUT_MS % 1000) * 1000};
	char msg[FW_CTL_REQ_MAX + 1];
	char *ans = NULL;
	ssize_t n;
	int fd, rc, len;

	*doc = NULL;
	len = snprintf(msg, sizeof(msg), "%s%s%s%s", secret ? "auth " : "", secret ? secret : "",
		       secret ? "\n" : "", req);
	if (len < 0 || (size_t)len > FW_CTL_REQ_MAX) {
		explicit_bzero(msg, sizeof(msg));
		snprintf(err, errlen, "request to %s: longer than %d bytes", path, FW_CTL_REQ_MAX);
		return -EMSGSIZE;
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		explicit_bzero(msg, sizeof(msg));
		snprintf(err, errlen, "control socket path %s: too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	if ((rc = take_turn()) != 0) {
		explicit_bzero(msg, sizeof(msg));
		snprintf(err, errlen, "request to %s: another request of flowcut-web's still in flight "
			 "after %d ms", path, FW_CTL_TIMEOUT_MS);
		return rc;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		pthread_mutex_unlock(&one);
		explicit_bzero(msg, sizeof(msg));
		return fail(rc, err, errlen, "socket for", path);
	}
	/* a unix connect waits on a full backlog for SO_SNDTIMEO; recv on SO_RCVTIMEO */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		rc = fail(-errno, err, errlen, "setsockopt timeout on", path);
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = fail(errno == EAGAIN ? -ETIMEDOUT : -errno, err, errlen, "connect", path);
		goto out;
	}
	if (send(fd, msg, (size_t)len, MSG_NOSIGNAL) != len) {
		rc = fail(errno == EAGAIN ? -ETIMEDOUT : -errno, err, errlen, "send to", path);
		goto out;
	}
	ans = malloc(FC_CTL_ANS_MAX + 1);
	if (ans == NULL) {
		rc = fail(-ENOMEM, err, errlen, "answer buffer for", path);
		goto out;
	}
	n = recv(fd, ans, FC_CTL_ANS_MAX, 0);
	if (n < 0) {
		rc = fail(errno == EAGAIN ? -ETIMEDOUT : -errno, err, errlen, "recv from", path);
		goto out;
	}
	ans[n] = '\0';
	rc = fw_ctl_answer(path, ans, (size_t)n, doc, err, errlen);
out:
	close(fd);
	pthread_mutex_unlock(&one);
	explicit_bzero(msg, sizeof(msg));
	free(ans);
	return rc;
}
