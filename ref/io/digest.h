/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ref/io/digest.h: the SHA-256 of the data files used in place, computed
 * on a second thread while the run proceeds (internal).
 *
 * A '<f8' .npy file is mapped and used in place (ref/io/npy.c); its digest
 * is needed only when the result is written.  The spec reader queues each
 * such mapping (pflref_digest_queue), starts one thread for the queue once
 * the problem is read (pflref_digest_start), and whoever needs the digests
 * (the result writer) or is about to unmap the files (pflref_spec_free)
 * waits for it (pflref_digest_wait).  The numerics never see the thread:
 * it only reads the read-only mappings, and the run stays single-threaded
 * and bit for bit the same. */
#ifndef PFLREF_IO_DIGEST_H
#define PFLREF_IO_DIGEST_H

#include <stddef.h>
#include "pflref/io.h"

/* Queue the SHA-256 of addr[0..len) for files[index].sha256 of *job
 * (created on first use).  0 when memory is short (the caller then hashes
 * at once). */
int pflref_digest_queue(pflref_digest_job **job, const void *addr,
                        size_t len, size_t index);

/* Start hashing job's queue into files[i].sha256 on a thread (the files
 * array must not move until pflref_digest_wait); when no thread can be
 * started, hash at once.  job may be NULL. */
void pflref_digest_start(pflref_digest_job *job, pflref_data_file *files);

/* Wait until every queued digest is written (at once when the thread never
 * started: the queue is hashed here).  job may be NULL. */
void pflref_digest_wait(pflref_digest_job *job);

/* Stop early (the digests are then not needed), wait, and free job. */
void pflref_digest_free(pflref_digest_job *job);

#endif
