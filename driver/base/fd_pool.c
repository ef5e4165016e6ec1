/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_pool: see fd_pool.h. */
#include "fd_pool.h"

#include <stdlib.h>
#include <string.h>

void
fd_pool_init(struct fd_pool *p, size_t size, unsigned int keep)
{
	*p = (struct fd_pool){ .size = size < sizeof(void *) ? sizeof(void *) : size,
			       .keep = keep };
}

void *
fd_pool_get(struct fd_pool *p)
{
	void *obj = p->free;

	if (obj == NULL)
		return calloc(1, p->size);
	memcpy(&p->free, obj, sizeof(void *));
	p->nfree--;
	memset(obj, 0, p->size);
	return obj;
}

void
fd_pool_put(struct fd_pool *p, void *obj)
{
	if (obj == NULL)
		return;
	if (p->nfree >= p->keep) {
		free(obj);
		return;
	}
	memcpy(obj, &p->free, sizeof(void *));
	p->free = obj;
	p->nfree++;
}

void
fd_pool_free(struct fd_pool *p)
{
	while (p->free != NULL) {
		void *obj = p->free;

		memcpy(&p->free, obj, sizeof(void *));
		free(obj);
	}
	p->nfree = 0;
}
