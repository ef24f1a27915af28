#include "config.h"

#include "settings.h"
#include "store.h"

/* src/fs/store_fs.c, src/pg/store_pg.c */
extern const struct scl_store_ops scl_store_fs, scl_store_pg;

const struct scl_store_ops *scl_store(void)
{
    return scl_settings()->store != NULL ? &scl_store_pg : &scl_store_fs;
}
