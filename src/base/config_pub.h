/* config_pub: publishes the current config to worker threads and frees replaced ones only
 * after every registered worker has moved on (a tiny quiescent-state scheme).
 *
 * Publisher (main thread): config_pub_swap() stores the new pointer with release order and
 * retires the old one. Workers: at the top of each loop iteration call config_pub_get(),
 * which loads the pointer with acquire order and records that the worker passed a quiescent
 * point; between two calls a worker may keep using the pointer it got. */
#ifndef PGHOTD_CONFIG_PUB_H
#define PGHOTD_CONFIG_PUB_H

#include "base/config.h"

#define CONFIG_PUB_MAX_WORKERS 16

struct config_pub;

typedef void (*config_pub_destroy_fn)(struct pghotd_config *cfg);

/* Main thread. Takes ownership of initial; destroy (config_free when NULL) releases a
 * config once no worker can see it. */
int config_pub_new(struct pghotd_config *initial, config_pub_destroy_fn destroy,
		   struct config_pub **out);
/* Main thread, after every worker has been unregistered or joined. Frees all configs. */
void config_pub_free(struct config_pub *pub);
/* Main thread, before the worker starts: returns a slot id >= 0 or -ENOSPC. */
int config_pub_register(struct config_pub *pub);
/* Worker thread, when it exits (or main thread after joining it). */
void config_pub_unregister(struct config_pub *pub, int slot);
/* Worker thread owning slot: the current config; valid until its next call. */
const struct pghotd_config *config_pub_get(struct config_pub *pub, int slot);
/* Main thread: the current config (the main thread never races with itself). */
const struct pghotd_config *config_pub_current(struct config_pub *pub);
/* Main thread: publish next (ownership taken) and retire the old one, which stays valid for
 * the main thread until its next config_pub_reclaim(). */
void config_pub_swap(struct config_pub *pub, struct pghotd_config *next);
/* Main thread: frees retired configs every worker has moved past; returns how many remain. */
int config_pub_reclaim(struct config_pub *pub);

#endif
