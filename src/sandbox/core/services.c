/*-------------------------------------------------------------------------
 * services.c
 *	  The list of service families the sandbox serves.
 *
 * Each family lives in services/<name>.c and exports one sb_service.  The
 * references below are weak so the core links with any subset of them:
 * a developer can build the core with just the family being worked on.
 *-------------------------------------------------------------------------
 */
#include "core.h"

#include <string.h>

extern const sb_service sb_service_admin;
extern const sb_service sb_service_oauth;
extern const sb_service sb_service_movies __attribute__((weak));
extern const sb_service sb_service_nested __attribute__((weak));
extern const sb_service sb_service_orders __attribute__((weak));
extern const sb_service sb_service_partner_misc __attribute__((weak));
extern const sb_service sb_service_catalog __attribute__((weak));
extern const sb_service sb_service_todos __attribute__((weak));
extern const sb_service sb_service_generation __attribute__((weak));
extern const sb_service sb_service_files __attribute__((weak));
extern const sb_service sb_service_scheduler __attribute__((weak));
extern const sb_service sb_service_jobs __attribute__((weak));

const sb_service *const *
sb_services(void)
{
	static const sb_service *list[16];
	static bool built = false;

	if (!built)
	{
		const sb_service *all[] = {
			&sb_service_admin, &sb_service_movies, &sb_service_nested, &sb_service_orders,
			&sb_service_partner_misc, &sb_service_catalog, &sb_service_todos,
			&sb_service_generation, &sb_service_files, &sb_service_scheduler,
			&sb_service_oauth, &sb_service_jobs,
		};
		int			n = 0;

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			if (all[i] != NULL)
				list[n++] = all[i];
		list[n] = NULL;
		built = true;
	}
	return list;
}

int
sb_service_set(const char *name, json_t *value)
{
	for (const sb_service *const *s = sb_services(); *s; s++)
	{
		int			r;

		if ((*s)->set == NULL)
			continue;
		r = (*s)->set(name, value);
		if (r != 0)
			return r;
	}
	return 0;
}

void
sb_services_reset(void)
{
	for (const sb_service *const *s = sb_services(); *s; s++)
		if ((*s)->reset)
			(*s)->reset();
}
