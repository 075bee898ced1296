/*
 * blockdb_native.c - the native C baseline of the BlockDb sweep (bench/BlockDb.Bench).
 *
 * Runs the same workloads as the .NET providers, with the same SQL text (read from the file the harness
 * writes from BlockDbSql; none is written here), the same data (the harness's binary data file, read whole
 * before any timing) and the same native library (dlopen of the exact libe_sqlite3.so the .NET process
 * loaded). It mirrors the statement sequence of BlockDb's engine (src/BlockDb/BlockRepository.cs): one
 * BEGIN IMMEDIATE batch committed every `batch` writes (0 = at the end only), select-xor-insert per strategy,
 * add-blockset with its size lookups and savepoint. The timed region runs from the first op to the final
 * COMMIT. Results go to stdout as key=value lines; per-op latencies (ns, double) to the --latency file.
 *
 * Build: make -f Makefile OUT=<binary>  (gcc -O2 -std=c11; no sqlite3.h needed: prototypes are declared here)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- The few sqlite3 declarations used (https://www.sqlite.org/c3ref/funclist.html). ---- */
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef long long sqlite3_int64; /* sqlite3_column_int64 returns a 64-bit integer, never an int. */
typedef void (*sqlite3_destructor_type)(void *);

#define SQLITE_OK 0
#define SQLITE_ROW 100
#define SQLITE_DONE 101
#define SQLITE_OPEN_READWRITE 0x00000002
#define SQLITE_OPEN_CREATE 0x00000004
#define SQLITE_OPEN_EXRESCODE 0x02000000
#define SQLITE_PREPARE_PERSISTENT 0x01
#define SQLITE_STATIC ((sqlite3_destructor_type)0)

static struct {
    const char *(*libversion)(void);
    int (*open_v2)(const char *, sqlite3 **, int, const char *);
    int (*close_v2)(sqlite3 *);
    int (*prepare_v3)(sqlite3 *, const char *, int, unsigned int, sqlite3_stmt **, const char **);
    int (*bind_text)(sqlite3_stmt *, int, const char *, int, sqlite3_destructor_type);
    int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
    int (*bind_null)(sqlite3_stmt *, int);
    int (*step)(sqlite3_stmt *);
    int (*reset)(sqlite3_stmt *);
    int (*finalize)(sqlite3_stmt *);
    sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
    const unsigned char *(*column_text)(sqlite3_stmt *, int);
    int (*column_bytes)(sqlite3_stmt *, int);
    int (*changes)(sqlite3 *);
    const char *(*errmsg)(sqlite3 *);
} sq;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("error=", stdout);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    fflush(stdout);
    exit(2);
}

static void load_library(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        die("dlopen %s: %s", path, dlerror());
#define LOAD(field, name)                                   \
    do {                                                    \
        *(void **)(&sq.field) = dlsym(lib, name);           \
        if (!sq.field)                                      \
            die("dlsym %s: %s", name, dlerror());           \
    } while (0)
    LOAD(libversion, "sqlite3_libversion");
    LOAD(open_v2, "sqlite3_open_v2");
    LOAD(close_v2, "sqlite3_close_v2");
    LOAD(prepare_v3, "sqlite3_prepare_v3");
    LOAD(bind_text, "sqlite3_bind_text");
    LOAD(bind_int64, "sqlite3_bind_int64");
    LOAD(bind_null, "sqlite3_bind_null");
    LOAD(step, "sqlite3_step");
    LOAD(reset, "sqlite3_reset");
    LOAD(finalize, "sqlite3_finalize");
    LOAD(column_int64, "sqlite3_column_int64");
    LOAD(column_text, "sqlite3_column_text");
    LOAD(column_bytes, "sqlite3_column_bytes");
    LOAD(changes, "sqlite3_changes");
    LOAD(errmsg, "sqlite3_errmsg");
#undef LOAD
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * A long-running .NET process reuses heap memory that earlier runs already faulted in; a fresh C process
 * would pay a page fault for every page SQLite's cache allocates. Touch and free `mb` MiB up front, with
 * trimming off, so SQLite's allocations here land in warm memory too.
 */
static void prefault_heap(long mb)
{
    if (mb <= 0)
        return;
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    enum { CHUNK = 1 << 20 };
    char **chunks = malloc((size_t)mb * sizeof *chunks);
    for (long i = 0; i < mb; i++) {
        chunks[i] = malloc(CHUNK);
        memset(chunks[i], 1, CHUNK);
    }
    for (long i = mb - 1; i >= 0; i--)
        free(chunks[i]);
    free(chunks);
}

/* ---- Input: SQL file and data file. ---- */

enum { S_FIND, S_INSERT, S_INSERT_OR_IGNORE, S_INSERT_RETURNING, S_BLOCK_SIZE, S_INSERT_BLOCKSET, S_INSERT_ENTRY,
       S_GET_BLOCKSET, S_LIST, S_COUNTS, S_BEGIN, S_COMMIT, S_ROLLBACK, S_SAVEPOINT, S_RELEASE, S_COUNT };

static const char *const statement_names[S_COUNT] = {
    "FindBlock", "InsertBlock", "InsertBlockOrIgnore", "InsertBlockReturningUnlessExists", "GetBlockSize",
    "InsertBlockset", "InsertBlocksetEntry", "GetBlockset", "ListBlocksetBlocks", "Counts", "Begin", "Commit",
    "Rollback", "Savepoint", "ReleaseSavepoint"};

static char *statement_sql[S_COUNT];
static char *pragma_sql[32];
static int pragma_count;

static char *read_file(const char *path, size_t *length)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buffer = malloc((size_t)n + 1);
    if (!buffer || fread(buffer, 1, (size_t)n, f) != (size_t)n)
        die("cannot read %s", path);
    buffer[n] = 0;
    fclose(f);
    *length = (size_t)n;
    return buffer;
}

/* SQL file: one "Name<TAB>SQL" line per statement; "PRAGMA<TAB>text" lines in the order to apply. */
static void read_sql(const char *path)
{
    size_t length;
    char *text = read_file(path, &length);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = 0;
        char *sql = tab + 1;
        if (strcmp(line, "PRAGMA") == 0) {
            if (pragma_count < 32)
                pragma_sql[pragma_count++] = sql;
            continue;
        }
        for (int i = 0; i < S_COUNT; i++)
            if (strcmp(line, statement_names[i]) == 0)
                statement_sql[i] = sql;
    }
    for (int i = 0; i < S_COUNT; i++)
        if (!statement_sql[i])
            die("statement %s missing from %s", statement_names[i], path);
}

typedef struct {
    int64_t items, groups, ids;
    char **hashes;       /* NUL-terminated, alive for the whole run (bound with SQLITE_STATIC). */
    int *hash_lengths;
    int64_t *sizes;
    int64_t *group_starts; /* groups + 1 */
    char **full_hashes;  /* NULL entries for no full hash */
    int *full_hash_lengths;
    int64_t *blockset_ids;
} section;

typedef struct {
    const char *p, *end;
} cursor;

static int64_t take_i64(cursor *c)
{
    if (c->end - c->p < 8)
        die("data file truncated");
    int64_t v;
    memcpy(&v, c->p, 8);
    c->p += 8;
    return v;
}

static int32_t take_i32(cursor *c)
{
    if (c->end - c->p < 4)
        die("data file truncated");
    int32_t v;
    memcpy(&v, c->p, 4);
    c->p += 4;
    return v;
}

static char *take_text(cursor *c, int *length)
{
    int32_t n = take_i32(c);
    *length = n;
    if (n < 0)
        return NULL;
    if (c->end - c->p < n)
        die("data file truncated");
    char *s = malloc((size_t)n + 1);
    memcpy(s, c->p, (size_t)n);
    s[n] = 0;
    c->p += n;
    return s;
}

static void read_section(cursor *c, section *s)
{
    s->items = take_i64(c);
    s->groups = take_i64(c);
    s->ids = take_i64(c);
    s->hashes = calloc((size_t)s->items + 1, sizeof(char *));
    s->hash_lengths = calloc((size_t)s->items + 1, sizeof(int));
    s->sizes = calloc((size_t)s->items + 1, sizeof(int64_t));
    for (int64_t i = 0; i < s->items; i++) {
        s->sizes[i] = take_i64(c);
        s->hashes[i] = take_text(c, &s->hash_lengths[i]);
    }
    if (s->groups > 0) {
        s->group_starts = calloc((size_t)s->groups + 1, sizeof(int64_t));
        s->full_hashes = calloc((size_t)s->groups, sizeof(char *));
        s->full_hash_lengths = calloc((size_t)s->groups, sizeof(int));
        for (int64_t g = 0; g <= s->groups; g++)
            s->group_starts[g] = take_i64(c);
        for (int64_t g = 0; g < s->groups; g++)
            s->full_hashes[g] = take_text(c, &s->full_hash_lengths[g]);
    }
    s->blockset_ids = calloc((size_t)s->ids + 1, sizeof(int64_t));
    for (int64_t i = 0; i < s->ids; i++)
        s->blockset_ids[i] = take_i64(c);
}

/* ---- The engine, mirrored from BlockRepository. ---- */

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *st[S_COUNT];
    int batch_open;
    int64_t pending;
    int64_t commit_every;
} engine;

static void check(engine *e, int rc, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
        die("%s failed: rc=%d %s", what, rc, sq.errmsg(e->db));
}

/* ExecuteNonQuery: step to DONE, read changes(), reset. */
static int exec_nonquery(engine *e, int which)
{
    sqlite3_stmt *s = e->st[which];
    int rc;
    while ((rc = sq.step(s)) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE)
        die("%s failed: rc=%d %s", statement_names[which], rc, sq.errmsg(e->db));
    int changes = sq.changes(e->db);
    sq.reset(s);
    return changes;
}

static void commit_batch(engine *e)
{
    if (!e->batch_open)
        return;
    exec_nonquery(e, S_COMMIT);
    e->batch_open = 0;
    e->pending = 0;
}

static void begin_write(engine *e)
{
    if (e->batch_open)
        return;
    exec_nonquery(e, S_BEGIN);
    e->batch_open = 1;
}

static void end_write(engine *e, int wrote)
{
    if (wrote)
        e->pending++;
    if (e->pending == 0 || (e->commit_every > 0 && e->pending >= e->commit_every))
        commit_batch(e);
}

static sqlite3_int64 find_block(engine *e, const char *hash, int length, int64_t size)
{
    sqlite3_stmt *s = e->st[S_FIND];
    check(e, sq.bind_text(s, 1, hash, length, SQLITE_STATIC), "bind");
    check(e, sq.bind_int64(s, 2, size), "bind");
    int rc = sq.step(s);
    check(e, rc, "FindBlock");
    sqlite3_int64 id = rc == SQLITE_ROW ? sq.column_int64(s, 0) : -1;
    sq.reset(s);
    return id;
}

static sqlite3_int64 write_one(engine *e, const char *hash, int length, int64_t size)
{
    begin_write(e);
    sqlite3_stmt *s = e->st[S_INSERT];
    check(e, sq.bind_text(s, 1, hash, length, SQLITE_STATIC), "bind");
    check(e, sq.bind_int64(s, 2, size), "bind");
    int rc = sq.step(s);
    if (rc != SQLITE_ROW)
        die("InsertBlock failed: rc=%d %s", rc, sq.errmsg(e->db));
    sqlite3_int64 id = sq.column_int64(s, 0);
    sq.reset(s);
    end_write(e, 1);
    return id;
}

enum { X_SELECT_THEN_INSERT, X_INSERT_OR_IGNORE, X_INSERT_RETURNING };

static sqlite3_int64 select_xor_insert(engine *e, int strategy, const char *hash, int length, int64_t size, int *created)
{
    if (strategy == X_SELECT_THEN_INSERT) {
        sqlite3_int64 id = find_block(e, hash, length, size);
        *created = id < 0;
        return id >= 0 ? id : write_one(e, hash, length, size);
    }
    begin_write(e);
    if (strategy == X_INSERT_OR_IGNORE) {
        sqlite3_stmt *s = e->st[S_INSERT_OR_IGNORE];
        check(e, sq.bind_text(s, 1, hash, length, SQLITE_STATIC), "bind");
        check(e, sq.bind_int64(s, 2, size), "bind");
        int changes = exec_nonquery(e, S_INSERT_OR_IGNORE);
        sqlite3_int64 id = find_block(e, hash, length, size);
        if (id < 0)
            die("block missing right after INSERT OR IGNORE");
        *created = changes > 0;
        end_write(e, changes > 0);
        return id;
    }
    sqlite3_stmt *s = e->st[S_INSERT_RETURNING];
    check(e, sq.bind_text(s, 1, hash, length, SQLITE_STATIC), "bind");
    check(e, sq.bind_int64(s, 2, size), "bind");
    int rc = sq.step(s);
    check(e, rc, "InsertBlockReturningUnlessExists");
    sqlite3_int64 id = rc == SQLITE_ROW ? sq.column_int64(s, 0) : -1;
    sq.reset(s);
    if (id >= 0) {
        *created = 1;
        end_write(e, 1);
        return id;
    }
    id = find_block(e, hash, length, size);
    if (id < 0)
        die("block conflicted on insert but is not found");
    *created = 0;
    end_write(e, 0);
    return id;
}

/* AddBlocksetAsync(ids): size lookups, then the blockset and its entries inside a savepoint. */
static sqlite3_int64 add_blockset(engine *e, const sqlite3_int64 *ids, int count, const char *full_hash, int full_length)
{
    sqlite3_stmt *size = e->st[S_BLOCK_SIZE];
    int64_t length = 0;
    for (int i = 0; i < count; i++) {
        check(e, sq.bind_int64(size, 1, ids[i]), "bind");
        if (sq.step(size) != SQLITE_ROW)
            die("block %lld not found", (long long)ids[i]);
        length += sq.column_int64(size, 0);
        sq.reset(size);
    }
    begin_write(e);
    exec_nonquery(e, S_SAVEPOINT);
    sqlite3_stmt *bs = e->st[S_INSERT_BLOCKSET];
    check(e, sq.bind_int64(bs, 1, length), "bind");
    if (full_hash)
        check(e, sq.bind_text(bs, 2, full_hash, full_length, SQLITE_STATIC), "bind");
    else
        check(e, sq.bind_null(bs, 2), "bind");
    if (sq.step(bs) != SQLITE_ROW)
        die("InsertBlockset failed: %s", sq.errmsg(e->db));
    sqlite3_int64 blockset = sq.column_int64(bs, 0);
    sq.reset(bs);
    sqlite3_stmt *entry = e->st[S_INSERT_ENTRY];
    check(e, sq.bind_int64(entry, 1, blockset), "bind");
    for (int i = 0; i < count; i++) {
        check(e, sq.bind_int64(entry, 2, i), "bind");
        check(e, sq.bind_int64(entry, 3, ids[i]), "bind");
        exec_nonquery(e, S_INSERT_ENTRY);
    }
    exec_nonquery(e, S_RELEASE);
    end_write(e, 1);
    return blockset;
}

static void open_engine(engine *e, const char *path, int64_t commit_every)
{
    memset(e, 0, sizeof *e);
    e->commit_every = commit_every;
    int rc = sq.open_v2(path, &e->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE, NULL);
    if (rc != SQLITE_OK)
        die("open %s: rc=%d", path, rc);
    for (int i = 0; i < pragma_count; i++) {
        sqlite3_stmt *s;
        if (sq.prepare_v3(e->db, pragma_sql[i], -1, 0, &s, NULL) != SQLITE_OK)
            die("prepare %s: %s", pragma_sql[i], sq.errmsg(e->db));
        int step;
        while ((step = sq.step(s)) == SQLITE_ROW) {
        }
        if (step != SQLITE_DONE)
            die("%s: %s", pragma_sql[i], sq.errmsg(e->db));
        sq.finalize(s);
    }
    for (int i = 0; i < S_COUNT; i++)
        if (sq.prepare_v3(e->db, statement_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &e->st[i], NULL) != SQLITE_OK)
            die("prepare %s: %s", statement_names[i], sq.errmsg(e->db));
}

static void close_engine(engine *e)
{
    commit_batch(e);
    for (int i = 0; i < S_COUNT; i++)
        sq.finalize(e->st[i]);
    sq.close_v2(e->db);
}

static void query_text(engine *e, const char *sql, char *out, size_t out_size)
{
    sqlite3_stmt *s;
    out[0] = 0;
    if (sq.prepare_v3(e->db, sql, -1, 0, &s, NULL) != SQLITE_OK)
        die("prepare %s: %s", sql, sq.errmsg(e->db));
    if (sq.step(s) == SQLITE_ROW && sq.column_text(s, 0))
        snprintf(out, out_size, "%s", (const char *)sq.column_text(s, 0));
    sq.finalize(s);
}

/* ---- Digest (FNV-1a 64 over little-endian int64, as the harness's Fnv64). ---- */

typedef struct {
    uint64_t h;
} fnv;

static inline void fnv_add(fnv *f, int64_t value)
{
    uint64_t v = (uint64_t)value;
    for (int i = 0; i < 8; i++) {
        f->h = (f->h ^ (v & 0xFF)) * 1099511628211ULL;
        v >>= 8;
    }
}

/* ---- Workloads. ---- */

enum { W_SELECT, W_INSERT, W_XOR1, W_XOR2, W_XOR3, W_JOIN, W_NEW_BLOCKSET, W_REPLAY };

static const char *const workload_names[] = {"select", "insert", "xor-select-insert", "xor-ignore-select",
                                             "xor-returning", "join", "new-blockset", "replay"};

typedef struct {
    int64_t group;          /* latency group size */
    double *samples;        /* per-op ns */
    int64_t count, in_group, last, start, end;
} recorder;

static inline void rec_start(recorder *r)
{
    r->count = 0;
    r->in_group = 0;
    r->start = r->last = now_ns();
}

static inline void rec_tick(recorder *r)
{
    if (++r->in_group == r->group) {
        int64_t t = now_ns();
        r->samples[r->count++] = (double)(t - r->last) / (double)r->group;
        r->last = t;
        r->in_group = 0;
    }
}

/* The final commit is part of the last sample (as in the harness). */
static inline void rec_stop(recorder *r)
{
    int64_t t = now_ns();
    r->end = t;
    if (r->in_group > 0)
        r->samples[r->count++] = (double)(t - r->last) / (double)r->in_group;
    else if (r->count > 0)
        r->samples[r->count - 1] += (double)(t - r->last) / (double)r->group;
}

typedef struct {
    int64_t ops, units, created;
    fnv digest;
} tally;

static int64_t units_of(const section *s, int workload)
{
    if (workload == W_JOIN)
        return s->ids;
    if (workload == W_NEW_BLOCKSET || workload == W_REPLAY)
        return s->groups;
    return s->items;
}

typedef struct {
    engine *e;
    pthread_mutex_t *lock; /* non-NULL in shared-connection mode */
} session;

static inline void lock_op(session *s)
{
    if (s->lock)
        pthread_mutex_lock(s->lock);
}

static inline void unlock_op(session *s)
{
    if (s->lock)
        pthread_mutex_unlock(s->lock);
}

/* Runs units [from, to) of a section; `r` may be NULL (warm-up). */
static void run_units(session *ss, int workload, const section *s, int64_t from, int64_t to, recorder *r, tally *t)
{
    engine *e = ss->e;
    int strategy = workload == W_XOR2 ? X_INSERT_OR_IGNORE : workload == W_XOR3 ? X_INSERT_RETURNING : X_SELECT_THEN_INSERT;
    sqlite3_int64 *ids = NULL;
    if (workload == W_NEW_BLOCKSET || workload == W_REPLAY) {
        int64_t largest = 1;
        for (int64_t g = from; g < to; g++)
            if (s->group_starts[g + 1] - s->group_starts[g] > largest)
                largest = s->group_starts[g + 1] - s->group_starts[g];
        ids = malloc((size_t)largest * sizeof *ids);
    }
    if (r)
        rec_start(r);
    for (int64_t u = from; u < to; u++) {
        switch (workload) {
        case W_SELECT: {
            lock_op(ss);
            sqlite3_int64 id = find_block(e, s->hashes[u], s->hash_lengths[u], s->sizes[u]);
            unlock_op(ss);
            fnv_add(&t->digest, id);
            t->ops++;
            break;
        }
        case W_INSERT: {
            lock_op(ss);
            sqlite3_int64 id = write_one(e, s->hashes[u], s->hash_lengths[u], s->sizes[u]);
            unlock_op(ss);
            fnv_add(&t->digest, id);
            t->created++;
            t->ops++;
            break;
        }
        case W_XOR1:
        case W_XOR2:
        case W_XOR3: {
            int created;
            lock_op(ss);
            sqlite3_int64 id = select_xor_insert(e, strategy, s->hashes[u], s->hash_lengths[u], s->sizes[u], &created);
            unlock_op(ss);
            fnv_add(&t->digest, id);
            fnv_add(&t->digest, created);
            t->created += created;
            t->ops++;
            break;
        }
        case W_JOIN: {
            sqlite3_stmt *list = e->st[S_LIST];
            int64_t rows = 0;
            lock_op(ss);
            check(e, sq.bind_int64(list, 1, s->blockset_ids[u]), "bind");
            int rc;
            while ((rc = sq.step(list)) == SQLITE_ROW) {
                int64_t index = sq.column_int64(list, 0);
                int64_t id = sq.column_int64(list, 1);
                const unsigned char *hash = sq.column_text(list, 2);
                int64_t size = sq.column_int64(list, 3);
                if (!hash)
                    die("NULL hash in join");
                fnv_add(&t->digest, index);
                fnv_add(&t->digest, id);
                fnv_add(&t->digest, size);
                rows++;
            }
            check(e, rc, "ListBlocksetBlocks");
            sq.reset(list);
            unlock_op(ss);
            if (rows == 0)
                die("blockset %lld has no entries", (long long)s->blockset_ids[u]);
            t->units += rows;
            t->ops++;
            break;
        }
        default: { /* new blockset (op = blockset) and replay (op = block, files are groups); one lock per engine call */
            int64_t first = s->group_starts[u], end = s->group_starts[u + 1];
            for (int64_t i = first; i < end; i++) {
                int created;
                lock_op(ss);
                ids[i - first] = select_xor_insert(e, X_SELECT_THEN_INSERT, s->hashes[i], s->hash_lengths[i], s->sizes[i], &created);
                unlock_op(ss);
                fnv_add(&t->digest, ids[i - first]);
                fnv_add(&t->digest, created);
                t->created += created;
                if (workload == W_REPLAY && i + 1 < end) {
                    t->ops++;
                    if (r)
                        rec_tick(r);
                }
            }
            lock_op(ss);
            sqlite3_int64 blockset = add_blockset(e, ids, (int)(end - first), s->full_hashes[u], s->full_hash_lengths[u]);
            unlock_op(ss);
            fnv_add(&t->digest, blockset);
            t->units += workload == W_REPLAY ? 1 : end - first;
            t->ops++;
            break;
        }
        }
        if (r)
            rec_tick(r);
    }
    lock_op(ss);
    commit_batch(e);
    unlock_op(ss);
    if (r)
        rec_stop(r);
    free(ids);
}

/* ---- Threads. ---- */

typedef struct {
    const char *db_path;
    int workload, threads, shared;
    int64_t batch;
    section warm, timed;
    pthread_barrier_t barrier;
    pthread_mutex_t lock;
    engine shared_engine;
} run_config;

typedef struct {
    run_config *cfg;
    int index;
    engine own;
    session ss;
    recorder rec;
    tally result;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    run_config *c = w->cfg;
    const section *warm = &c->warm, *timed = &c->timed;
    int64_t wu = units_of(warm, c->workload), tu = units_of(timed, c->workload);
    int64_t w_from = wu * w->index / c->threads, w_to = wu * (w->index + 1) / c->threads;
    int64_t t_from = tu * w->index / c->threads, t_to = tu * (w->index + 1) / c->threads;
    tally scratch = {0, 0, 0, {14695981039346656037ULL}};
    run_units(&w->ss, c->workload, warm, w_from, w_to, NULL, &scratch);
    pthread_barrier_wait(&c->barrier);
    run_units(&w->ss, c->workload, timed, t_from, t_to, &w->rec, &w->result);
    return NULL;
}

static int workload_of(const char *name)
{
    for (int i = 0; i < (int)(sizeof workload_names / sizeof *workload_names); i++)
        if (strcmp(name, workload_names[i]) == 0)
            return i;
    die("unknown workload %s", name);
    return -1;
}

static const char *arg_value(int argc, char **argv, const char *name, const char *fallback)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    if (!fallback)
        die("missing %s", name);
    return fallback;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        load_library(arg_value(argc, argv, "--lib", NULL));
        printf("libversion=%s\n", sq.libversion());
        return 0;
    }
    const char *lib = arg_value(argc, argv, "--lib", NULL);
    run_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.db_path = arg_value(argc, argv, "--db", NULL);
    cfg.workload = workload_of(arg_value(argc, argv, "--workload", NULL));
    cfg.batch = atoll(arg_value(argc, argv, "--batch", "0"));
    cfg.threads = atoi(arg_value(argc, argv, "--threads", "1"));
    cfg.shared = atoi(arg_value(argc, argv, "--shared", "0"));
    int64_t group = atoll(arg_value(argc, argv, "--group", "1"));
    const char *latency_path = arg_value(argc, argv, "--latency", NULL);
    if (cfg.threads < 1 || group < 1)
        die("threads and group must be at least 1");

    prefault_heap(atol(arg_value(argc, argv, "--prefault-mb", "0")));
    load_library(lib);
    read_sql(arg_value(argc, argv, "--sql", NULL));
    size_t length;
    char *data = read_file(arg_value(argc, argv, "--data", NULL), &length);
    cursor c = {data, data + length};
    if (length < 8 || memcmp(data, "BDBNDAT1", 8) != 0)
        die("not a BlockDb bench data file");
    c.p += 8;
    read_section(&c, &cfg.warm);
    read_section(&c, &cfg.timed);

    worker *workers = calloc((size_t)cfg.threads, sizeof *workers);
    pthread_barrier_init(&cfg.barrier, NULL, (unsigned)cfg.threads);
    pthread_mutex_init(&cfg.lock, NULL);
    if (cfg.shared)
        open_engine(&cfg.shared_engine, cfg.db_path, cfg.batch);
    int64_t timed_ops = cfg.workload == W_REPLAY ? cfg.timed.items : units_of(&cfg.timed, cfg.workload);
    for (int i = 0; i < cfg.threads; i++) {
        worker *w = &workers[i];
        w->cfg = &cfg;
        w->index = i;
        w->result.digest.h = 14695981039346656037ULL;
        if (cfg.shared) {
            w->ss.e = &cfg.shared_engine;
            w->ss.lock = &cfg.lock;
        } else {
            open_engine(&w->own, cfg.db_path, cfg.batch);
            w->ss.e = &w->own;
        }
        w->rec.group = group;
        w->rec.samples = calloc((size_t)(timed_ops / group + 4), sizeof(double));
    }

    engine *first = workers[0].ss.e;
    char value[128];
    printf("libversion=%s\nlibrary=%s\n", sq.libversion(), lib);
    static const char *const pragmas[] = {"journal_mode", "synchronous", "temp_store", "cache_size", "mmap_size", "threads", "busy_timeout"};
    for (int i = 0; i < 7; i++) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA %s", pragmas[i]);
        query_text(first, sql, value, sizeof value);
        printf("pragma.%s=%s\n", pragmas[i], value);
    }

    pthread_t *ids = calloc((size_t)cfg.threads, sizeof *ids);
    for (int i = 0; i < cfg.threads; i++)
        if (pthread_create(&ids[i], NULL, worker_main, &workers[i]) != 0)
            die("pthread_create failed");
    for (int i = 0; i < cfg.threads; i++)
        pthread_join(ids[i], NULL);

    int64_t start = workers[0].rec.start, end = workers[0].rec.end, ops = 0, units = 0, created = 0, samples = 0;
    for (int i = 0; i < cfg.threads; i++) {
        worker *w = &workers[i];
        if (w->rec.start < start)
            start = w->rec.start;
        if (w->rec.end > end)
            end = w->rec.end;
        ops += w->result.ops;
        units += w->result.units;
        created += w->result.created;
        samples += w->rec.count;
    }
    FILE *lat = fopen(latency_path, "wb");
    if (!lat)
        die("cannot write %s", latency_path);
    for (int i = 0; i < cfg.threads; i++)
        fwrite(workers[i].rec.samples, sizeof(double), (size_t)workers[i].rec.count, lat);
    fclose(lat);

    sqlite3_stmt *counts = first->st[S_COUNTS];
    if (sq.step(counts) != SQLITE_ROW)
        die("Counts failed: %s", sq.errmsg(first->db));
    printf("counts=%lld,%lld,%lld\n", (long long)sq.column_int64(counts, 0), (long long)sq.column_int64(counts, 1),
           (long long)sq.column_int64(counts, 2));
    sq.reset(counts);
    printf("elapsed_ns=%" PRId64 "\nops=%" PRId64 "\nunits=%" PRId64 "\ncreated=%" PRId64 "\nsamples=%" PRId64 "\n",
           end - start, ops, units, created, samples);
    printf("digest=%" PRIu64 "\n", cfg.threads == 1 ? workers[0].result.digest.h : 0);
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    printf("clock_res_ns=%ld\n", res.tv_nsec);

    if (cfg.shared)
        close_engine(&cfg.shared_engine);
    else
        for (int i = 0; i < cfg.threads; i++)
            close_engine(&workers[i].own);
    printf("status=ok\n");
    return 0;
}
