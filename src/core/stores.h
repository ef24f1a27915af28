/* SPDX-License-Identifier: MIT */
/*
 * Every store, in one table: the only place a store is chosen.
 *
 * A row is SCL_STORE(NAME, CHOSEN, OPS, ADMIN): the store's name, its
 * function that says whether it is the one in use (int CHOSEN(void),
 * which reads the store's own settings, once, from the environment: it
 * runs at load, from the constructor or the first hook, so it must be
 * async-signal-safe; store.c remembers the answer), its library operations
 * (struct scl_store_ops OPS, store.h) and its tool side (struct
 * scl_store_admin ADMIN, store_admin.h, in libscl_admin).  The first row
 * whose CHOSEN says 1 is the store in use; the last row's says 1 always.
 *
 * store.c reads the table for scl_store() and store_admin.c for
 * scl_store_admin(), each taking only its own column: the preloaded
 * library never names a store's tool side.  A new store is a folder of
 * src/, a row here, and its lines in Makefile.am.
 */
#ifndef SCL_STORES_H
#define SCL_STORES_H

#define SCL_STORES(SCL_STORE)                                                                                          \
    SCL_STORE(postgresql, scl_pg_chosen, scl_store_pg, scl_store_pg_admin)                                             \
    SCL_STORE(filesystem, scl_fs_chosen, scl_store_fs, scl_store_fs_admin)

#endif
