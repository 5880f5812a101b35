/*-------------------------------------------------------------------------
 *
 * failalloc.c
 *		  An LD_PRELOAD shim for the scenario tests: makes malloc, realloc
 *		  and calloc fail (NULL, ENOMEM) for large allocations, as they do
 *		  under memory pressure with overcommit off.
 *
 * Armed by a trigger file, so a server can start with the shim loaded and
 * be made to fail later: PSVC_FAILALLOC_FILE names the file.  While it
 * does not exist nothing fails.  Its content is
 *
 *     THRESHOLD [malloc] [realloc] [calloc]
 *
 * THRESHOLD in bytes: a request of at least that size fails; the names
 * choose the functions that fail (all three when none is given).
 * Requests under 1 MB never fail and never look at the file, so the
 * shim costs nothing to the rest of the server.  Each failure writes a
 * line "failalloc: malloc(N) fails" to stderr (the server log), so a test
 * can tell the shim did act.
 *
 * Build: cc -shared -fPIC -O2 -o failalloc.so failalloc.c
 *
 * It calls glibc's own __libc_malloc/__libc_realloc/__libc_calloc (no
 * dlsym, which may itself allocate), and does no stdio.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHIM_MIN ((size_t) 1 << 20)

extern void *__libc_malloc(size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__libc_calloc(size_t n, size_t size);

static void
say(const char *fn, size_t size)
{
	char		buf[96];
	char		num[24];
	int			i = sizeof(num);
	size_t		len;

	num[--i] = '\0';
	do
	{
		num[--i] = (char) ('0' + size % 10);
		size /= 10;
	} while (size > 0 && i > 0);
	len = 0;
	memcpy(buf + len, "failalloc: ", 11);
	len += 11;
	memcpy(buf + len, fn, strlen(fn));
	len += strlen(fn);
	buf[len++] = '(';
	memcpy(buf + len, num + i, strlen(num + i));
	len += strlen(num + i);
	memcpy(buf + len, ") fails\n", 8);
	len += 8;
	if (write(2, buf, len) < 0)
		return;
}

/* True when a request of size bytes by fn must fail now. */
static int
must_fail(const char *fn, size_t size)
{
	const char *path;
	char		buf[128];
	ssize_t		n;
	int			fd;
	size_t		threshold = 0;
	char	   *p;

	if (size < SHIM_MIN)
		return 0;
	path = getenv("PSVC_FAILALLOC_FILE");
	if (path == NULL)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (p = buf; *p >= '0' && *p <= '9'; p++)
		threshold = threshold * 10 + (size_t) (*p - '0');
	if (threshold == 0 || size < threshold)
		return 0;
	/* function names given: only those fail */
	if ((strstr(p, "malloc") || strstr(p, "realloc") || strstr(p, "calloc")) &&
		!strstr(p, fn))
		return 0;
	say(fn, size);
	return 1;
}

void *
malloc(size_t size)
{
	if (must_fail("malloc", size))
	{
		errno = ENOMEM;
		return NULL;
	}
	return __libc_malloc(size);
}

void *
realloc(void *ptr, size_t size)
{
	if (must_fail("realloc", size))
	{
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(ptr, size);
}

void *
calloc(size_t n, size_t size)
{
	if (n != 0 && size > (size_t) -1 / n)
		return __libc_calloc(n, size);	/* let glibc report the overflow */
	if (must_fail("calloc", n * size))
	{
		errno = ENOMEM;
		return NULL;
	}
	return __libc_calloc(n, size);
}
