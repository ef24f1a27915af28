/* SPDX-License-Identifier: MIT */
/*
 * The environment a new image gets from the exec and spawn hooks: when
 * it will load this library too (LD_PRELOAD in that environment names
 * it), the variable the store passes on (SWERVE_CLAIM_DIR, for the
 * filesystem store) is added, so that it joins the same claims; no other
 * program's environment is changed.
 *
 * Async-signal-safe (execve may be called from a signal handler, perhaps
 * on a small alternate stack): the new vectors are built in a struct
 * scl_room, one of two in static storage, or (when that one is in use)
 * one of 720 bytes in the caller's frame; larger ones are mapped (mmap is
 * async-signal-safe; malloc is not).
 */
#ifndef SCL_IMAGE_ENV_H
#define SCL_IMAGE_ENV_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

/* What fits in a frame: more is mapped. */
#define SCL_ROOM_POINTERS 64
#define SCL_ROOM_TEXT     192

/* Room for one new vector (and, for an environment, its one new entry). */
struct scl_room {
    char *pointers[SCL_ROOM_POINTERS];
    char text[SCL_ROOM_TEXT];
    void *mapped;
    size_t mapped_size;
    atomic_int *taken; /* a static room's flag, or NULL in a frame */
};

/* What a static room is for: an exec's argument list, or a new image's
 * environment (both may be built for one exec). */
enum scl_room_use { SCL_ROOM_ARGV, SCL_ROOM_ENV };

/* The static room for USE, or NULL when it is taken: by another thread,
 * by the code this signal handler interrupted, or by a vfork child that
 * exec'd with it in the memory it shared with this process, until this
 * process gives it back (scl_rooms_left_by()).  The caller then uses a
 * room in its frame. */
struct scl_room *scl_room_claim(enum scl_room_use use);

/* CHILD, which shared this process's memory and has exec'd or ended (a
 * vfork child, a clone child with CLONE_VM and CLONE_VFORK), may have
 * left static rooms taken, and what it mapped for them: they are free
 * again, and unmapped.  A room it built in its frame is lost with what
 * it mapped (only when the static room was busy).  Async-signal-safe. */
void scl_rooms_left_by(pid_t child);

/* A room in a frame, for when scl_room_claim() found none. */
void scl_room_in_frame(struct scl_room *r);

/* Room in R for N pointers and TEXT bytes: 0, or -1 when it could not be
 * mapped (the caller then goes on without it). */
int scl_room_take(struct scl_room *r, size_t n, size_t text, char ***pointers, char **buf);

/* After the call that used R returned (a successful exec never does): its
 * mapping unmapped, a static room given back.  Keeps errno. */
void scl_room_free(struct scl_room *r);

/* Whether a new image given ENVP would get another environment. */
int scl_image_env_differs(char *const *envp);

/* ENVP as the new image should get it: a copy in R with the store's
 * variable replaced or added, or (when it needs none) ENVP itself; NULL
 * with errno ENOMEM when it needs one and there is no room for the copy.
 * scl_room_free(R) after the call that used it. */
char *const *scl_image_env(char *const *envp, struct scl_room *r);

/* A call that starts a new image with the environment it is given:
 * exec's (0, or -1 with errno) or posix_spawn's (0 or an error number). */
typedef int scl_image_call(void *args, char *const envp[]);

/* CALL(ARGS, ENVP as scl_image_env() makes it).  A new image that loads
 * the shim starts in its server's claim directory or not at all: when
 * the kernel has no room for the variable (E2BIG) there is no second
 * try without it, and without memory for the copy the call fails with
 * ENOMEM (SWERVE_DEBUG says which).  SPAWN: CALL returns its error
 * rather than setting errno.  CALL's result, and errno as it left it.
 * Async-signal-safe. */
int scl_start_image(scl_image_call *call, void *args, char *const envp[], int spawn);

#endif
