/* SPDX-License-Identifier: MIT */
/*
 * libpq, loaded with dlopen() on the first claim that needs it: linking it
 * would load libssl, Kerberos and LDAP into every process of every server
 * under the shim, and the shim would no longer depend on glibc alone.
 *
 * Only the functions the PostgreSQL store uses, declared here from libpq's
 * stable ABI (libpq.so.5), so that building needs no libpq headers.
 */
#ifndef SCL_LIBPQ_H
#define SCL_LIBPQ_H

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef struct pg_cancel PGcancel;

/* The values of libpq-fe.h's enums this store looks at. */
enum { SCL_CONNECTION_OK = 0 };
enum { SCL_PGRES_COMMAND_OK = 1, SCL_PGRES_TUPLES_OK = 2 };
enum { SCL_PG_DIAG_SEVERITY_NONLOCALIZED = 'V', SCL_PG_DIAG_SQLSTATE = 'C', SCL_PG_DIAG_MESSAGE_PRIMARY = 'M' };
/* The OID of bytea, for binary parameters. */
#define SCL_BYTEAOID 17u

struct scl_libpq {
    PGconn *(*connectdbParams)(const char *const *keywords, const char *const *values, int expand_dbname);
    int (*status)(const PGconn *conn);
    char *(*errorMessage)(const PGconn *conn);
    void (*finish)(PGconn *conn);
    int (*socket)(const PGconn *conn);
    int (*backendPID)(const PGconn *conn);
    PGresult *(*exec)(PGconn *conn, const char *query);
    PGresult *(*execParams)(PGconn *conn, const char *command, int nParams, const unsigned int *paramTypes,
                            const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                            int resultFormat);
    PGresult *(*prepare)(PGconn *conn, const char *stmtName, const char *query, int nParams,
                         const unsigned int *paramTypes);
    PGresult *(*execPrepared)(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
                              const int *paramLengths, const int *paramFormats, int resultFormat);
    int (*resultStatus)(const PGresult *res);
    char *(*resultErrorField)(const PGresult *res, int fieldcode);
    int (*ntuples)(const PGresult *res);
    char *(*getvalue)(const PGresult *res, int row, int col);
    int (*getlength)(const PGresult *res, int row, int col);
    int (*getisnull)(const PGresult *res, int row, int col);
    void (*clear)(PGresult *res);
    int (*consumeInput)(PGconn *conn);
    void *(*setNoticeReceiver)(PGconn *conn, void (*receiver)(void *arg, const PGresult *res), void *arg);
    /* The asynchronous calls, so that every statement has a deadline. */
    int (*sendQueryParams)(PGconn *conn, const char *command, int nParams, const unsigned int *paramTypes,
                           const char *const *paramValues, const int *paramLengths, const int *paramFormats,
                           int resultFormat);
    int (*sendPrepare)(PGconn *conn, const char *stmtName, const char *query, int nParams,
                       const unsigned int *paramTypes);
    int (*sendQueryPrepared)(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues,
                             const int *paramLengths, const int *paramFormats, int resultFormat);
    int (*isBusy)(PGconn *conn);
    PGresult *(*getResult)(PGconn *conn);
    PGcancel *(*getCancel)(PGconn *conn);
    int (*cancel)(PGcancel *cancel, char *errbuf, int errbufsize);
    void (*freeCancel)(PGcancel *cancel);
    /* Why a connection failed, beyond its message. */
    int (*connectionNeedsPassword)(const PGconn *conn);
    int (*connectionUsedPassword)(const PGconn *conn);
    int (*sendQuery)(PGconn *conn, const char *query);
    /* Where a connection went, for the tools' db check. */
    char *(*host)(const PGconn *conn);
    char *(*port)(const PGconn *conn);
    char *(*db)(const PGconn *conn);
    char *(*user)(const PGconn *conn);
};

/* libpq's functions, loaded on the first call (thread-safe); NULL with
 * errno ELIBACC, and a SWERVE_DEBUG line saying why, when libpq.so.5
 * cannot be loaded. */
const struct scl_libpq *scl_libpq(void);

#endif
