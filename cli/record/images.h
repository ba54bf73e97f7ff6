/*
 * images.h - what `profil record` learns from the ring files: one image
 * per ring file (a process, or a program it exec'd), with its modules,
 * threads and aggregated samples.  Filled while the command runs
 * (images_poll) and turned into a profile at the end (build.c).
 *
 * A profiled process can write anything into its ring file, so every
 * size, offset and count read from one is checked before use; a file that
 * breaks a rule is not read again (one warning), what was read from it
 * before is kept, and the run goes on.
 */
#ifndef PROFIL_CLI_IMAGES_H
#define PROFIL_CLI_IMAGES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "agg.h"
#include "../model/index.h"

struct ring_file;

struct module_event {
	int load;               /* 1 load, 0 unload */
	uint32_t gen;
	uint64_t base, start, end, file_offset;
	int64_t time_ns;        /* when it happened (CLOCK_REALTIME) */
	char *path;
	char build_id[65];      /* lowercase hex */
};

/* A child an image reaped, with the CPU time (ns) the kernel counted for
 * it and its reaped descendants (ring.h RING_REAPED). */
struct reaped_child {
	uint32_t pid;
	uint64_t cpu_ns;
};

struct thread_name {
	uint32_t tid;
	char name[16];
	size_t last; /* its last sample's entry in samples (agg_add()), 0: none */
};

struct image {
	char *file;             /* ring file path */
	struct ring_file *rf;   /* mapped, NULL while young and once retired */
	size_t maplen;          /* the file's length (its mapping's) */
	int rfd;                /* young (ringread.c): its descriptor + 1,
	                         * read with pread(); 0 when not */
	int64_t young_since_ns; /* CLOCK_MONOTONIC when it was opened young */
	int64_t polled_ns;      /* CLOCK_MONOTONIC of its last read (young) */
	/* The layout as checked when the file was opened: the process can
	 * rewrite the header later, so these are never read from it again. */
	uint64_t data_size, modlog_offset, modlog_size;
	uint32_t pid, ppid;
	char comm[16];
	char *cmdline;          /* arguments joined by spaces */
	int64_t start_ns;
	uint32_t hz;
	struct module_event *mods;
	size_t nmods, capmods;
	uint64_t modlog_read;   /* bytes of the module log consumed */
	size_t mods_kept;       /* mods[] modkeep.c has looked at */
	struct thread_name *threads;
	size_t nthreads, capthreads;
	struct prof_index thread_index; /* threadidx.c: threads[] by tid */
	struct agg samples;     /* key: tid, modgen, pcs[] -> weight */
	uint64_t weight;        /* total weight read */
	uint64_t last_read;     /* bytes of records the last poll read */
	uint64_t consumed;      /* records read up to here; tail, published
	                         * to the writers, is at the page below
	                         * (records.c publish()) */
	int keep_pages;         /* its file system would not give consumed
	                         * pages back (MADV_REMOVE refused) */
	uint64_t lost;
	int32_t signal;
	char engine[28];
	int switched;           /* a thread moved from its event to a timer
	                         * for switching often (ring.h RING_FLAG_SWITCHED) */
	int faulted;            /* its sampling stopped at a write that
	                         * faulted (ring.h RING_FLAG_FAULTED) */
	int broken;             /* dropped for a format violation: not read
	                         * again, what was read before is kept */
	struct reaped_child *reaped; /* children this image reaped */
	size_t nreaped;
	/* what forked children without a ring file told here (ring.h
	 * RING_FORKED), in order */
	struct forked_word *forked;
	size_t nforked;
	int execing;            /* its process was exec'ing at the last read
	                         * (ring.h RING_EXECING) */
	int retired;            /* its process gone, its file unmapped and
	                         * removed, what it held kept (retire.c) */
	int64_t gone_since_ns;  /* CLOCK_MONOTONIC when its process was first
	                         * seen gone, 0 while it lives */
	uint32_t ns_pid;        /* its pid in a PID namespace not ours, pid
	                         * the one we see (nspid.c); 0 if ours.  Its
	                         * threads' ids are that namespace's. */
	uint64_t pidns;         /* with ns_pid: that namespace's inode, 0 if
	                         * unknown (reaped.c matches its reaps by it) */
};

/* A forked child's word (ring.h RING_FORKED). */
struct forked_word {
	uint32_t pid;       /* as the child saw it */
	int execing;        /* RING_FORKED_EXECING */
	uint32_t modgen;
	uint32_t npcs;
	uint64_t *pcs;      /* the fork's callers (its first word's), or NULL */
	uint64_t *locs;     /* their locations in the profile: record_build() */
};

/* nspid.c: a ring file's name and the pid its process has here. */
struct nspid {
	char *name;
	uint32_t pid;
	uint64_t pidns; /* the inode of its PID namespace; 0 if unknown */
};

struct images {
	char *dir;
	struct image *v;
	size_t n, cap;          /* cap: v's room (prof_xgrow: a build opens
	                         * hundreds, and one more at a time copied
	                         * them all each time) */
	/* scan.c: when the directory was last read, its mtime then, and how
	 * many ring files in it were not ready to open (ns since the epoch). */
	int64_t scanned_ns, dir_mtime_ns;
	size_t pending;
	/* scan.c: the ring files opened, by name: v's index + 1 per slot of
	 * an open-addressing table (0: empty), known_n of v entered so far. */
	size_t *known, known_cap, known_n;
	/* The last poll: most bytes read from one ring, the smallest ring. */
	uint64_t max_read, min_ring;
	/* nspid.c: the socket processes of other PID namespaces name their
	 * ring files on (descriptor + 1, 0: none), and what they said. */
	int pids_fd;
	struct nspid *pids;
	size_t npids;
	/* ringserve.c: the socket agents that cannot make their ring file
	 * ask on (descriptor + 1, 0: none), the abstract one agents that
	 * cannot see the directory ask on (the same), and the token they
	 * must say. */
	int rings_fd, rings_abs_fd;
	char token[33];
	/* notes.c: what agents told us to say (ringserve.c "PROFIL-SAY") */
	struct agent_note *notes;
	size_t nnotes, notes_dropped;
	int64_t retire_checked_ns; /* retire.c: CLOCK_MONOTONIC of its last look */
	int closing;            /* the command ended: this poll reads every ring */
};

/* Finds new ring files in set->dir and reads everything committed in
 * every image.  Returns the number of sample records read. */
size_t images_poll(struct images *set);
/* Opens the ring files of set->dir not opened yet (scan.c), when the
 * directory may hold one. */
void images_scan(struct images *set);
/* Maps im->file once its header is complete: 1 (im->broken set if it is
 * wrong), 0 when not ready yet. */
int images_open(struct image *im);
/* The first image whose agent said its engine (the command's, unless it
 * made no ring or its ring was dropped before a read); NULL if none. */
const struct image *images_described(const struct images *set);
/* retire.c: unmaps and removes the ring files of processes gone a
 * while, their images kept; how many it retired. */
size_t images_retire(struct images *set);
/* retire.c: CLOCK_MONOTONIC in ns, the clock of gone_since_ns,
 * young_since_ns and polled_ns. */
int64_t images_now_ns(void);
/* Unmaps and removes the ring files and the directory; frees all. */
void images_free(struct images *set);
/* records.c: what is new in im (its module log, then its records);
 * the number of sample records read.  The caller guards it against
 * SIGBUS (images.c). */
size_t images_read_one(struct image *im);
/* Whether im is read at each poll: mapped, or young. */
static inline int images_reading(const struct image *im)
{
	return !im->broken && (im->rf || im->rfd);
}
/* images.c: the header's fields into im from a complete header (im->maplen
 * set), or im dropped. */
void images_take_header(struct image *im, struct ring_file *rf);
/* records.c, for ringread.c too: one record of a span, the module log's
 * records from im->modlog_read (at holding them) up to len, the header's
 * state words; and a young image's catching up once mapped. */
size_t records_take(struct image *im, unsigned char *data, uint64_t off, uint64_t size);
void records_take_modules(struct image *im, const char *at, uint64_t len);
void records_take_state(struct image *im, struct ring_file *rf);
void records_adopt(struct image *im);
/* ringread.c: young images.  ringread_room(): whether one more may be;
 * ringread_open(): 1 when the header of the file open at fd (len bytes)
 * was complete (im young, keeping fd, or dropped), 0 when not yet;
 * ringread_poll(): images_read_one() of a young image; ringread_close():
 * its descriptor closed (retired, dropped, freed). */
int ringread_room(void);
int ringread_open(struct image *im, int fd, size_t len);
size_t ringread_poll(struct image *im);
void ringread_close(struct image *im);
/* modkeep.c: modkeep_poll(), after a poll: the file of each build-id
 * loaded for the first time held open (while its process may live).
 * modkeep_files(): at the end, those the module's path no longer reaches
 * (removed, replaced, another root's), for sym_options.files (*out is
 * the caller's to free; the descriptors stay open until modkeep_free()):
 * their number. */
struct sym_file;
void modkeep_poll(struct images *set);
size_t modkeep_files(struct sym_file **out);
void modkeep_free(void);
/* images.c: stops reading im for good, with one warning naming why;
 * what was read from it before stays. */
void images_drop(struct image *im, const char *why);

/* credrecv.c: one datagram of fd (non-blocking) into text (size bytes,
 * NUL-terminated): 1 with *out filled (pid 0 if the kernel gave no
 * credentials), -1 if interrupted (try again), 0 when none is left. */
struct credmsg {
	uint32_t pid; /* the sender's, as we see it */
	int flags;    /* recvmsg's msg_flags: MSG_TRUNC, MSG_CTRUNC */
	struct sockaddr_un from;
	socklen_t fromlen;
};
int credrecv(int fd, char *text, size_t size, struct credmsg *out);

/* notes.c: notes_add() keeps what process pid's agent said (text, one
 * line); notes_print() says each text once on stderr, with how many
 * processes said it, after a last drain of the socket, and forgets them;
 * notes_free() forgets them unsaid. */
void notes_add(struct images *set, uint32_t pid, const char *text);
void notes_print(struct images *set);
void notes_free(struct images *set);

/* nspid.c: nspid_open() makes dir's socket for processes of other PID
 * namespaces and tells the command our namespace (the environment): its
 * descriptor, -1 if there is none.  nspid_drain() reads what they sent;
 * nspid_apply() gives image im, opened from ring file `name`, the pid it
 * has here (and its parent's), if its process said; nspid_free(). */
int nspid_open(const char *dir);
void nspid_drain(struct images *set);
void nspid_apply(const struct images *set, struct image *im, const char *name);
void nspid_free(struct images *set);
/* nspid.c: ring file `name` is pid's here, whatever its header says;
 * pidns: the inode of the process's PID namespace, 0 if unknown.
 * nspid_of(): that inode for a process we see as pid, 0 if gone. */
void nspid_note(struct images *set, const char *name, uint32_t pid, uint64_t pidns);
uint64_t nspid_of(uint32_t pid);

/* ringserve.c: ringserve_open() makes dir's socket on which agents that
 * cannot create their ring file (their process runs as another user)
 * ask us to, opens the directory to them (0711), and puts the token
 * they must give in the command's environment: its descriptor, -1 if
 * there is none; and the abstract socket (set->rings_abs_fd) on which
 * agents that cannot see dir (another mount namespace) ask for it.  ringserve_drain() answers what was asked; it signals
 * SIGIO when a request arrives (a no-op handler is installed).
 * ringserve_close(). */
int ringserve_open(struct images *set);
/* ringserve.c: fd (one of our sockets) signals SIGIO when a datagram
 * arrives, which ends the recorder's nap (a no-op handler is installed):
 * 0, or -1. */
int record_wake_by(int fd);
void ringserve_drain(struct images *set);
void ringserve_close(struct images *set);
/* Whether im's header was read and valid: its process was profiled, and
 * what was read from it counts even if it was dropped later. */
static inline int image_valid(const struct image *im)
{
	return im->cmdline != NULL;
}
/* threadidx.c: the name of thread tid of an image ("" when unknown);
 * its entry, a new empty one if it has none (*added says which). */
const char *image_thread_name(const struct image *im, uint32_t tid);
struct thread_name *image_thread_entry(struct image *im, uint32_t tid, int *added);

#endif
