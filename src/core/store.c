#include "config.h"

#include "store.h"

/* The filesystem store (src/fs/store_fs.c). */
extern const struct scl_store_ops scl_store_fs;

const struct scl_store_ops *scl_store(void)
{
    return &scl_store_fs;
}
