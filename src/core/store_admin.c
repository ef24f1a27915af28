#include "config.h"

#include "settings.h"
#include "store_admin.h"

/* src/fs/admin_fs.c, src/pg/admin.c */
extern const struct scl_store_admin scl_store_fs_admin, scl_store_pg_admin;

const struct scl_store_admin *scl_store_admin(void)
{
    return scl_settings()->store != NULL ? &scl_store_pg_admin : &scl_store_fs_admin;
}
