/*
 * blockdb_native.c - the native C baselines of the BlockDb sweep (bench/BlockDb.Bench).
 *
 * Runs the same workloads as the .NET providers, with the same SQL text (read from the file the harness writes
 * from BlockDbSql; none is written here), the same data (the harness's binary data file, read whole before any
 * timing) and the same native library (dlopen of the exact libe_sqlite3.so the .NET process loaded), in one of
 * two modes:
 *
 *   --mode same   the SAME DESIGN as BlockDb's engine for the file's layout (--layout text|blob|keymap):
 *                 the statements, the transaction shape and the data structures of src/BlockDb.Core, minus
 *                 .NET (no argument validation, no call gate, no ValueTask, no timer thread):
 *                 - a write batch: BEGIN IMMEDIATE, COMMIT every --batch writes (0 = at the end only), a
 *                   transaction that holds no write closed at once (Engine/CommitPolicy.cs, Sqlite/SqliteTransaction.cs);
 *                 - a read batch: reads outside the write batch share one BEGIN DEFERRED transaction, ended after
 *                   --reads reads, once --read-ms old, when any session of this process committed, and before a
 *                   write begins (Sqlite/ReadTransaction.cs; --reads 0 = BlockDb's default: --default-reads in WAL
 *                   mode, else 1; 1 = off);
 *                 - text/blob: the unique (Hash, Size) index, select-xor-insert per strategy, the hash bound as
 *                   TEXT, or decoded from base64 per op and bound as a BLOB (Stores/IndexedBlockStore.cs);
 *                 - keymap: an in-memory open-addressing map from a 32-bit key of (hash, size) to candidate IDs,
 *                   every candidate verified with VerifyBlockId before it is trusted, a catch-up read at the start
 *                   of each write transaction, inserts at explicit IDs (InsertBlockWithId), MaxBlockId raised
 *                   before COMMIT, the session's own inserts merged into the shared map after it
 *                   (KeyMap/KeyMapBlockStore.cs, KeyTable.cs, BlockKeyMap.cs);
 *                 - add-blockset: the block sizes read inside the write transaction, the blockset and its entries
 *                   inside a savepoint (Blocksets/BlocksetService.cs).
 *   --mode plain  the PLAIN LIMIT: the same statements on the same file, with no transaction bookkeeping: the
 *                 whole warm-up, then the whole timed region, each in ONE transaction (BEGIN DEFERRED for the
 *                 read-only workloads, BEGIN IMMEDIATE otherwise) committed at its end, no read batches, no
 *                 savepoints, and hashes already in their stored form (decoded before timing). KeyMap keeps its map
 *                 and its verification read (that is the layout), with one catch-up per transaction.
 *
 * The import workload (keymap layout, one thread) is a rebuild (issue 25 item 2): the rows of an empty KeyMap file
 * inserted at their IDs in ID order, --batch rows per transaction (0 = one), the map filled as rows go in, MaxBlockId
 * raised before each COMMIT, no per-row trigger. Plain: the loop of import_loop.c on the harness's data, the insert guard
 * dropped once before timing. Same design: BlockDb's bulk import (ARCHITECTURE M6), the guard lifted inside each
 * transaction and restored and checked before its COMMIT. After the timed region, every --check-every-th row is found
 * again through the map and its verification read (the digest).
 *
 * The recreate workload (--workload recreate --stream FILE, keymap or text layout) is the plain loop of a rebuild of
 * blocks and blocksets from a Duplicati-like stream (run_recreate, below).
 *
 * The timed region runs from the first op to the final COMMIT. Results go to stdout as key=value lines; per-op
 * latencies (ns, double) to the --latency file. Build: make -f Makefile OUT=<binary> (gcc -O2 -std=c11; no
 * sqlite3.h needed: the prototypes are declared here).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
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
#define SQLITE_NULL 5
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
    int (*bind_blob)(sqlite3_stmt *, int, const void *, int, sqlite3_destructor_type);
    int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
    int (*bind_null)(sqlite3_stmt *, int);
    int (*step)(sqlite3_stmt *);
    int (*reset)(sqlite3_stmt *);
    int (*finalize)(sqlite3_stmt *);
    sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
    const unsigned char *(*column_text)(sqlite3_stmt *, int);
    const void *(*column_blob)(sqlite3_stmt *, int);
    int (*column_bytes)(sqlite3_stmt *, int);
    int (*column_type)(sqlite3_stmt *, int);
    int (*changes)(sqlite3 *);
    sqlite3_int64 (*last_insert_rowid)(sqlite3 *);
    int (*get_autocommit)(sqlite3 *);
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
    LOAD(bind_blob, "sqlite3_bind_blob");
    LOAD(bind_int64, "sqlite3_bind_int64");
    LOAD(bind_null, "sqlite3_bind_null");
    LOAD(step, "sqlite3_step");
    LOAD(reset, "sqlite3_reset");
    LOAD(finalize, "sqlite3_finalize");
    LOAD(column_int64, "sqlite3_column_int64");
    LOAD(column_text, "sqlite3_column_text");
    LOAD(column_blob, "sqlite3_column_blob");
    LOAD(column_bytes, "sqlite3_column_bytes");
    LOAD(column_type, "sqlite3_column_type");
    LOAD(changes, "sqlite3_changes");
    LOAD(last_insert_rowid, "sqlite3_last_insert_rowid");
    LOAD(get_autocommit, "sqlite3_get_autocommit");
    LOAD(errmsg, "sqlite3_errmsg");
#undef LOAD
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The calling thread's CPU time: what the harness also reads for the .NET workers (ThreadCpu.cs). */
static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
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

/* ---- Base64 (standard alphabet, '=' padding), as BlockHash.Decode and BlobHashCodec.Read. ---- */

enum { MAX_HASH_BYTES = 66, MAX_HASH_TEXT = 88 };

static signed char b64_value[256];
static const char b64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_init(void)
{
    memset(b64_value, -1, sizeof b64_value);
    for (int i = 0; i < 64; i++)
        b64_value[(unsigned char)b64_alphabet[i]] = (signed char)i;
}

/* Decodes a valid hash text (the harness's data is canonical); returns the byte count. */
static int b64_decode(const char *text, int length, unsigned char *out)
{
    int n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (int i = 0; i < length && text[i] != '='; i++) {
        acc = (acc << 6) | (uint32_t)b64_value[(unsigned char)text[i]];
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return n;
}

/* ---- Input: SQL file and data file. ---- */

enum { S_FIND, S_INSERT, S_INSERT_OR_IGNORE, S_INSERT_RETURNING, S_BLOCK_SIZE, S_INSERT_BLOCKSET, S_INSERT_ENTRY,
       S_LIST, S_COUNTS, S_BEGIN_READ, S_BEGIN, S_COMMIT, S_ROLLBACK, S_SAVEPOINT, S_RELEASE,
       S_GET_BY_ID, S_INSERT_WITH_ID, S_RAISE_MAX, S_CATCH_UP, S_COUNT_BLOCKS,
       S_TRIGGER_ROWS, S_READ_STATE, S_LIFT_GUARD, S_RESTORE_GUARD, S_COUNT };

static const char *const statement_names[S_COUNT] = {
    "FindBlock", "InsertBlock", "InsertBlockOrIgnore", "InsertBlockReturningUnlessExists", "GetBlockSizeAndVolumeState",
    "InsertBlockset", "InsertBlocksetEntry", "ListBlocksetBlocksFrom", "Counts", "BeginReadBatch", "Begin", "Commit",
    "Rollback", "Savepoint", "ReleaseSavepoint",
    "VerifyBlockId", "InsertBlockWithId", "RaiseMaxBlockId", "KeyMapCatchUp", "CountBlocks",
    "KeyMapTriggerRows", "ReadKeyMapState", "LiftGuardInsert", "RestoreGuardInsert"};

/* Which layouts prepare a statement (BlockDb's stores prepare their own): 1 = text/blob (the unique index), 2 = keymap,
   3 = both; 0 = none: DDL run as text when used (exec_text), as the engine's Execute does. */
static const int statement_layouts[S_COUNT] = {1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 0, 0};

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
    unsigned char **decoded; /* plain mode with BLOB hashes: the stored form, decoded before timing */
    int *decoded_lengths;
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
        if (s->hash_lengths[i] < 1 || s->hash_lengths[i] > MAX_HASH_TEXT)
            die("hash %lld has %d characters", (long long)i, s->hash_lengths[i]);
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

static void decode_section(section *s)
{
    s->decoded = calloc((size_t)s->items + 1, sizeof(unsigned char *));
    s->decoded_lengths = calloc((size_t)s->items + 1, sizeof(int));
    for (int64_t i = 0; i < s->items; i++) {
        s->decoded[i] = malloc(MAX_HASH_BYTES);
        s->decoded_lengths[i] = b64_decode(s->hashes[i], s->hash_lengths[i], s->decoded[i]);
    }
}

/* ---- Settings. ---- */

enum { L_TEXT, L_BLOB, L_KEYMAP };
enum { M_SAME, M_PLAIN };

static int layout = L_TEXT;
static int mode = M_SAME;
static int64_t check_every = 1; /* import: every n-th row found again after the timed region */

/* The database's commit counter (Sessions/CommitClock.cs): a commit by any session of this process restarts the others' read batches. */
static _Atomic long long commit_clock;

/* ---- The key table (KeyMap/KeyTable.cs): 8-byte slots, key in the high 32 bits, ID in the low 32; 0 = empty. ---- */

typedef struct {
    uint64_t *slots;
    int64_t capacity, count;
} keytable;

#define MAX_LOAD 0.8
#define MIN_CAPACITY 1024

/* A 32-bit key of all hash bytes and the size: xxHash32's short-input path (the shape of .NET's HashCode.AddBytes + Add). */
static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

static uint32_t key_of(const unsigned char *hash, int length, int64_t size)
{
    const uint32_t P1 = 2654435761U, P3 = 3266489917U, P4 = 668265263U, P5 = 374761393U;
    uint32_t h = 0x5bd1e995U + P5 + (uint32_t)length + 8;
    int i = 0;
    for (; i + 4 <= length; i += 4) {
        uint32_t w;
        memcpy(&w, hash + i, 4);
        h = rotl32(h + w * P3, 17) * P4;
    }
    for (; i < length; i++)
        h = rotl32(h + hash[i] * P5, 11) * P1;
    h = rotl32(h + (uint32_t)size * P3, 17) * P4;
    h = rotl32(h + (uint32_t)((uint64_t)size >> 32) * P3, 17) * P4;
    h ^= h >> 15;
    h *= 2246822519U;
    h ^= h >> 13;
    h *= P3;
    h ^= h >> 16;
    return h;
}

static inline uint64_t slot_of(uint32_t key, int64_t id) { return ((uint64_t)key << 32) | (uint32_t)id; }

static inline int64_t home_of(uint32_t key, int64_t capacity) { return (int64_t)(((uint64_t)key * (uint64_t)capacity) >> 32); }

static int64_t preferred_capacity(int64_t count)
{
    int64_t c = (int64_t)((double)count / MAX_LOAD * 1.5);
    return c < MIN_CAPACITY ? MIN_CAPACITY : c;
}

static int kt_has_room(const keytable *t, int64_t more) { return t->count + more <= (int64_t)((double)t->capacity * MAX_LOAD); }

static void kt_resize(keytable *t, int64_t capacity)
{
    uint64_t *slots = calloc((size_t)capacity, sizeof *slots);
    if (!slots)
        die("out of memory for a key table of %lld slots", (long long)capacity);
    for (int64_t j = 0; j < t->capacity; j++) {
        uint64_t slot = t->slots[j];
        if (slot) {
            int64_t i = home_of((uint32_t)(slot >> 32), capacity);
            while (slots[i])
                i = i + 1 == capacity ? 0 : i + 1;
            slots[i] = slot;
        }
    }
    free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
}

static void kt_reserve(keytable *t, int64_t more)
{
    if (more > 0 && !kt_has_room(t, more))
        kt_resize(t, preferred_capacity(t->count + more));
}

static int kt_holds(const keytable *t, uint64_t slot)
{
    if (t->capacity == 0)
        return 0;
    for (int64_t i = home_of((uint32_t)(slot >> 32), t->capacity);; i = i + 1 == t->capacity ? 0 : i + 1) {
        if (t->slots[i] == slot)
            return 1;
        if (t->slots[i] == 0)
            return 0;
    }
}

/* Adds unless the same slot value is there; the caller made room. */
static void kt_add(keytable *t, uint64_t slot)
{
    for (int64_t i = home_of((uint32_t)(slot >> 32), t->capacity);; i = i + 1 == t->capacity ? 0 : i + 1) {
        if (t->slots[i] == slot)
            return;
        if (t->slots[i] == 0) {
            t->slots[i] = slot;
            t->count++;
            return;
        }
    }
}

static void kt_clear(keytable *t)
{
    if (t->count > 0) {
        memset(t->slots, 0, (size_t)t->capacity * sizeof *t->slots);
        t->count = 0;
    }
}

/* The shared map of the database (BlockKeyMap): W (covered through), V (generation, schema version). KeyMap runs one thread here. */
static struct {
    keytable table;
    int64_t covered_through;
    int64_t generation, schema_version;
    int loaded;
} map;

/* ---- The engine, mirrored from src/BlockDb.Core. ---- */

typedef struct {
    sqlite3 *db;
    sqlite3_stmt *st[S_COUNT];
    /* SqliteTransaction / CommitPolicy */
    int batch_open;
    int64_t pending;
    int64_t commit_every;
    /* ReadTransaction */
    int64_t reads_limit, read_ms;
    int read_open;
    int64_t reads, read_started;
    long long clock_seen;
    /* KeyMapBlockStore */
    keytable own;
    int caught_up;
    int64_t next_id, max_inserted;
    int64_t seen_generation, seen_schema_version;
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

static inline int in_transaction(engine *e) { return !sq.get_autocommit(e->db); }

/* ReadTransaction.End */
static void read_end(engine *e)
{
    if (!e->read_open)
        return;
    e->read_open = 0;
    if (in_transaction(e))
        exec_nonquery(e, S_COMMIT);
}

/* ReadTransaction.Enter: join the open read transaction, or end it (full, old, or a commit since) and begin a new one. */
static void read_enter(engine *e)
{
    if (e->reads_limit <= 1)
        return;
    long long clock = atomic_load_explicit(&commit_clock, memory_order_acquire);
    if (e->read_open) {
        if (in_transaction(e) && e->reads < e->reads_limit && clock == e->clock_seen
            && (now_ns() - e->read_started) / 1000000 < e->read_ms) {
            e->reads++;
            return;
        }
        read_end(e);
    }
    e->clock_seen = clock;
    exec_nonquery(e, S_BEGIN_READ);
    e->read_open = 1;
    e->reads = 1;
    e->read_started = now_ns();
}

/* SqliteTransaction.EnterRead: reads inside the write transaction see its writes; outside they join the read batch. */
static inline void enter_read(engine *e)
{
    if (!e->batch_open)
        read_enter(e);
}

static void keymap_merge(engine *e);

static void commit_batch(engine *e)
{
    if (!e->batch_open) {
        read_end(e);
        return;
    }
    if (layout == L_KEYMAP && e->max_inserted > 0) { /* BeforeCommit */
        sqlite3_stmt *raise = e->st[S_RAISE_MAX];
        check(e, sq.bind_int64(raise, 1, e->max_inserted), "bind");
        exec_nonquery(e, S_RAISE_MAX);
    }
    exec_nonquery(e, S_COMMIT);
    e->batch_open = 0;
    e->pending = 0;
    atomic_fetch_add_explicit(&commit_clock, 1, memory_order_release);
    if (layout == L_KEYMAP) /* AfterCommit */
        keymap_merge(e);
}

static void begin_write(engine *e)
{
    if (e->batch_open) {
        if (!in_transaction(e))
            die("the write batch's transaction was rolled back under it");
        return;
    }
    read_end(e); /* a write never runs in a read snapshot */
    exec_nonquery(e, S_BEGIN);
    e->batch_open = 1;
}

static void end_write(engine *e, int wrote)
{
    if (mode == M_PLAIN)
        return; /* one transaction, committed by the loop */
    if (wrote)
        e->pending++;
    if (e->pending == 0 || (e->commit_every > 0 && e->pending >= e->commit_every))
        commit_batch(e);
}

/* A hash as the layout binds it: the text, or its bytes (decoded now in the same design, before timing in plain). */
typedef struct {
    const char *text;
    int text_length;
    const unsigned char *bytes;
    int length;
    unsigned char buffer[MAX_HASH_BYTES];
} hashref;

static inline void hash_of(const section *s, int64_t i, hashref *h)
{
    h->text = s->hashes[i];
    h->text_length = s->hash_lengths[i];
    if (layout == L_TEXT)
        return;
    if (s->decoded) {
        h->bytes = s->decoded[i];
        h->length = s->decoded_lengths[i];
    } else {
        h->length = b64_decode(h->text, h->text_length, h->buffer);
        h->bytes = h->buffer;
    }
}

static inline void bind_hash(engine *e, sqlite3_stmt *s, int index, const hashref *h)
{
    if (layout == L_TEXT)
        check(e, sq.bind_text(s, index, h->text, h->text_length, SQLITE_STATIC), "bind");
    else
        check(e, sq.bind_blob(s, index, h->bytes, h->length, SQLITE_STATIC), "bind");
}

/* ---- Indexed layouts (text, blob): IndexedBlockStore and its strategies. ---- */

static sqlite3_int64 find_indexed(engine *e, const hashref *h, int64_t size)
{
    sqlite3_stmt *s = e->st[S_FIND];
    bind_hash(e, s, 1, h);
    check(e, sq.bind_int64(s, 2, size), "bind");
    int rc = sq.step(s);
    check(e, rc, "FindBlock");
    sqlite3_int64 id = rc == SQLITE_ROW ? sq.column_int64(s, 0) : -1;
    sq.reset(s);
    return id;
}

/* InsertRow: the new block with no volume (parameter 3 NULL); its ID is last_insert_rowid(). */
static sqlite3_int64 insert_indexed(engine *e, const hashref *h, int64_t size)
{
    sqlite3_stmt *s = e->st[S_INSERT];
    bind_hash(e, s, 1, h);
    check(e, sq.bind_int64(s, 2, size), "bind");
    check(e, sq.bind_null(s, 3), "bind");
    exec_nonquery(e, S_INSERT);
    return sq.last_insert_rowid(e->db);
}

/* ---- KeyMap: KeyMapBlockStore over the shared map. ---- */

static int verify(engine *e, int64_t id, const hashref *h, int64_t size)
{
    /* SQLite compares the row with the bound hash and size (VerifyBlockId), as BlockDb's verification does. */
    sqlite3_stmt *s = e->st[S_GET_BY_ID];
    check(e, sq.bind_int64(s, 1, id), "bind");
    check(e, sq.bind_blob(s, 2, h->bytes, h->length, SQLITE_STATIC), "bind");
    check(e, sq.bind_int64(s, 3, size), "bind");
    int rc = sq.step(s);
    check(e, rc, "VerifyBlockId");
    sq.reset(s);
    return rc == SQLITE_ROW;
}

/* KeyTable.FindVerified: the first candidate of the key whose row holds the hash and size. */
static sqlite3_int64 find_verified(engine *e, const keytable *t, uint32_t key, const hashref *h, int64_t size)
{
    if (t->capacity == 0)
        return -1;
    for (int64_t i = home_of(key, t->capacity), step = 0; step < t->capacity; step++, i = i + 1 == t->capacity ? 0 : i + 1) {
        uint64_t slot = t->slots[i];
        if (slot == 0)
            return -1;
        if ((uint32_t)(slot >> 32) == key && verify(e, (uint32_t)slot, h, size))
            return (uint32_t)slot;
    }
    return -1;
}

/*
 * BlockKeyMap.CatchUp: one KeyMapCatchUp statement (the state and every row above W, one snapshot); the whole table
 * when the map was never loaded (sized from COUNT(*) first). Sets next_id = above every row and MaxBlockId.
 */
static void catch_up(engine *e)
{
    int full = !map.loaded;
    int64_t after = full ? INT64_MIN : map.covered_through;
    if (full) {
        sqlite3_stmt *count = e->st[S_COUNT_BLOCKS];
        if (sq.step(count) != SQLITE_ROW)
            die("CountBlocks failed: %s", sq.errmsg(e->db));
        kt_reserve(&map.table, sq.column_int64(count, 0) - map.table.count);
        sq.reset(count);
    }
    sqlite3_stmt *s = e->st[S_CATCH_UP];
    check(e, sq.bind_int64(s, 1, after), "bind");
    int rc = sq.step(s);
    if (rc != SQLITE_ROW)
        die("KeyMapCatchUp returned no state row: %s", sq.errmsg(e->db));
    int64_t max_block_id = sq.column_int64(s, 0), generation = sq.column_int64(s, 1), schema = sq.column_int64(s, 2);
    if (!full && (generation != map.generation || schema != map.schema_version))
        die("the KeyMap file changed version under the benchmark");
    int64_t last = 0;
    do {
        if (sq.column_type(s, 4) == SQLITE_NULL)
            break; /* the one row of a pass with no block above the watermark */
        int64_t id = sq.column_int64(s, 3);
        int length = sq.column_bytes(s, 4);
        const unsigned char *bytes = sq.column_blob(s, 4);
        last = id;
        if (length < 1 || length > MAX_HASH_BYTES)
            continue;
        uint64_t slot = slot_of(key_of(bytes, length, sq.column_int64(s, 5)), id);
        if (!kt_holds(&map.table, slot)) {
            kt_reserve(&map.table, 1);
            kt_add(&map.table, slot);
        }
    } while ((rc = sq.step(s)) == SQLITE_ROW);
    check(e, rc, "KeyMapCatchUp");
    sq.reset(s);
    if (full) {
        map.loaded = 1;
        map.covered_through = max_block_id;
        map.generation = generation;
        map.schema_version = schema;
    } else if (max_block_id > map.covered_through) {
        map.covered_through = max_block_id;
    }
    int64_t highest = max_block_id > last ? max_block_id : last;
    if (!full && after > highest)
        highest = after;
    e->next_id = highest + 1;
    e->seen_generation = generation;
    e->seen_schema_version = schema;
}

/* KeyMapBlockStore.Find: the shared map; inside the write transaction the own inserts, and one catch-up per transaction. */
static sqlite3_int64 keymap_find(engine *e, uint32_t key, const hashref *h, int64_t size, int may_catch_up)
{
    sqlite3_int64 id = find_verified(e, &map.table, key, h, size);
    if (id >= 0)
        return id;
    int in_write = e->batch_open;
    if (in_write) {
        if ((id = find_verified(e, &e->own, key, h, size)) >= 0)
            return id;
        if (e->caught_up)
            return -1;
    }
    if (!may_catch_up)
        return -1;
    catch_up(e);
    if (in_write)
        e->caught_up = 1;
    return find_verified(e, &map.table, key, h, size);
}

/* KeyMapBlockStore.InsertNew: at the next ID, into the session's own table (the shared map in plain mode). */
static sqlite3_int64 keymap_insert(engine *e, uint32_t key, const hashref *h, int64_t size)
{
    if (!e->caught_up)
        die("KeyMap insert without a catch-up in this transaction");
    int64_t id = e->next_id;
    keytable *into = mode == M_PLAIN ? &map.table : &e->own;
    kt_reserve(&map.table, e->own.count + 1); /* BlockKeyMap.Reserve: room for the merge after COMMIT */
    kt_reserve(into, 1);
    sqlite3_stmt *s = e->st[S_INSERT_WITH_ID];
    check(e, sq.bind_int64(s, 1, id), "bind");
    check(e, sq.bind_blob(s, 2, h->bytes, h->length, SQLITE_STATIC), "bind");
    check(e, sq.bind_int64(s, 3, size), "bind");
    check(e, sq.bind_null(s, 4), "bind");
    exec_nonquery(e, S_INSERT_WITH_ID);
    kt_add(into, slot_of(key, id));
    e->max_inserted = id;
    e->next_id = id + 1;
    return id;
}

/* AfterCommit: the session's inserts join the shared map; W moves when the map is at the version the session caught up at. */
static void keymap_merge(engine *e)
{
    if (e->max_inserted > 0) { /* own inserts (none in plain mode, where they went to the shared map at once) */
        kt_reserve(&map.table, e->own.count);
        for (int64_t i = 0; e->own.count > 0 && i < e->own.capacity; i++)
            if (e->own.slots[i])
                kt_add(&map.table, e->own.slots[i]);
        if (e->seen_generation == map.generation && e->seen_schema_version == map.schema_version && e->max_inserted > map.covered_through)
            map.covered_through = e->max_inserted;
    }
    kt_clear(&e->own);
    e->caught_up = 0;
    e->next_id = 0;
    e->max_inserted = 0;
}

/* ---- Operations (the repository calls). ---- */

/* KeyMapBlockStore.EnsureLoaded: the map's first load runs outside the write lock. */
static inline void ensure_loaded(engine *e)
{
    if (!map.loaded)
        catch_up(e);
}

static sqlite3_int64 find_block(engine *e, const hashref *h, int64_t size)
{
    enter_read(e);
    if (layout != L_KEYMAP)
        return find_indexed(e, h, size);
    return keymap_find(e, key_of(h->bytes, h->length, size), h, size, 1);
}

static sqlite3_int64 insert_block(engine *e, const hashref *h, int64_t size)
{
    if (layout == L_KEYMAP)
        ensure_loaded(e);
    begin_write(e);
    sqlite3_int64 id;
    if (layout == L_KEYMAP) {
        uint32_t key = key_of(h->bytes, h->length, size);
        if (keymap_find(e, key, h, size, 1) >= 0)
            die("block already in the index");
        id = keymap_insert(e, key, h, size);
    } else {
        id = insert_indexed(e, h, size);
    }
    end_write(e, 1);
    return id;
}

enum { X_SELECT_THEN_INSERT, X_INSERT_OR_IGNORE, X_INSERT_RETURNING };

static sqlite3_int64 select_xor_insert(engine *e, int strategy, const hashref *h, int64_t size, int *created)
{
    if (layout == L_KEYMAP) {
        uint32_t key = key_of(h->bytes, h->length, size);
        if (!e->batch_open) { /* outside a write transaction a verified hit needs no lock */
            read_enter(e);
            ensure_loaded(e);
            sqlite3_int64 known = keymap_find(e, key, h, size, 0);
            if (known >= 0) {
                *created = 0;
                return known;
            }
        }
        begin_write(e);
        sqlite3_int64 id = keymap_find(e, key, h, size, 1);
        if (id >= 0) {
            *created = 0;
            end_write(e, 0);
            return id;
        }
        id = keymap_insert(e, key, h, size);
        *created = 1;
        end_write(e, 1);
        return id;
    }
    if (strategy == X_SELECT_THEN_INSERT) {
        enter_read(e);
        sqlite3_int64 id = find_indexed(e, h, size);
        if (id >= 0) {
            *created = 0;
            return id;
        }
        begin_write(e);
        id = insert_indexed(e, h, size);
        *created = 1;
        end_write(e, 1);
        return id;
    }
    begin_write(e);
    if (strategy == X_INSERT_OR_IGNORE) {
        sqlite3_stmt *s = e->st[S_INSERT_OR_IGNORE];
        bind_hash(e, s, 1, h);
        check(e, sq.bind_int64(s, 2, size), "bind");
        check(e, sq.bind_null(s, 3), "bind");
        int changes = exec_nonquery(e, S_INSERT_OR_IGNORE);
        sqlite3_int64 id = changes > 0 ? sq.last_insert_rowid(e->db) : find_indexed(e, h, size);
        if (id < 0)
            die("block missing right after INSERT OR IGNORE");
        *created = changes > 0;
        end_write(e, changes > 0);
        return id;
    }
    sqlite3_stmt *s = e->st[S_INSERT_RETURNING];
    bind_hash(e, s, 1, h);
    check(e, sq.bind_int64(s, 2, size), "bind");
    check(e, sq.bind_null(s, 3), "bind");
    int rc = sq.step(s);
    check(e, rc, "InsertBlockReturningUnlessExists");
    sqlite3_int64 id = rc == SQLITE_ROW ? sq.column_int64(s, 0) : -1;
    sq.reset(s);
    if (id >= 0) {
        *created = 1;
        end_write(e, 1);
        return id;
    }
    id = find_indexed(e, h, size);
    if (id < 0)
        die("block conflicted on insert but is not found");
    *created = 0;
    end_write(e, 0);
    return id;
}

/* AddBlocksetAsync(ids): inside the write transaction, each block's size (and its volume's state), then the blockset and its entries in a savepoint. */
static sqlite3_int64 add_blockset(engine *e, const sqlite3_int64 *ids, int count, const char *full_hash, int full_length)
{
    begin_write(e);
    sqlite3_stmt *size = e->st[S_BLOCK_SIZE];
    int64_t length = 0;
    for (int i = 0; i < count; i++) {
        check(e, sq.bind_int64(size, 1, ids[i]), "bind");
        if (sq.step(size) != SQLITE_ROW)
            die("block %lld not found", (long long)ids[i]);
        if (sq.column_type(size, 1) != SQLITE_NULL) {
            const char *state = (const char *)sq.column_text(size, 1);
            if (strcmp(state, "Deleting") == 0 || strcmp(state, "Deleted") == 0)
                die("block %lld is in a volume being deleted", (long long)ids[i]);
        }
        length += sq.column_int64(size, 0);
        sq.reset(size);
    }
    if (mode == M_SAME)
        exec_nonquery(e, S_SAVEPOINT);
    sqlite3_stmt *bs = e->st[S_INSERT_BLOCKSET];
    check(e, sq.bind_int64(bs, 1, length), "bind");
    if (full_hash)
        check(e, sq.bind_text(bs, 2, full_hash, full_length, SQLITE_STATIC), "bind");
    else
        check(e, sq.bind_null(bs, 2), "bind");
    exec_nonquery(e, S_INSERT_BLOCKSET);
    sqlite3_int64 blockset = sq.last_insert_rowid(e->db);
    sqlite3_stmt *entry = e->st[S_INSERT_ENTRY];
    check(e, sq.bind_int64(entry, 1, blockset), "bind");
    for (int i = 0; i < count; i++) {
        check(e, sq.bind_int64(entry, 2, i), "bind");
        check(e, sq.bind_int64(entry, 3, ids[i]), "bind");
        exec_nonquery(e, S_INSERT_ENTRY);
    }
    if (mode == M_SAME)
        exec_nonquery(e, S_RELEASE);
    end_write(e, 1);
    return blockset;
}

/* Runs one statement of text to its end (rows discarded). */
static void exec_text(engine *e, const char *sql)
{
    sqlite3_stmt *s;
    if (sq.prepare_v3(e->db, sql, -1, 0, &s, NULL) != SQLITE_OK)
        die("prepare %s: %s", sql, sq.errmsg(e->db));
    int step;
    while ((step = sq.step(s)) == SQLITE_ROW) {
    }
    if (step != SQLITE_DONE)
        die("%s: %s", sql, sq.errmsg(e->db));
    sq.finalize(s);
}

static void open_engine(engine *e, const char *path, int64_t commit_every)
{
    memset(e, 0, sizeof *e);
    e->commit_every = commit_every;
    int rc = sq.open_v2(path, &e->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE, NULL);
    if (rc != SQLITE_OK)
        die("open %s: rc=%d", path, rc);
    for (int i = 0; i < pragma_count; i++)
        exec_text(e, pragma_sql[i]);
    for (int i = 0; i < S_COUNT; i++)
        if ((statement_layouts[i] & (layout == L_KEYMAP ? 2 : 1))
            && sq.prepare_v3(e->db, statement_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &e->st[i], NULL) != SQLITE_OK)
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

enum { W_SELECT, W_INSERT, W_XOR1, W_XOR2, W_XOR3, W_JOIN, W_NEW_BLOCKSET, W_REPLAY, W_XOR_HIT, W_IMPORT };

static const char *const workload_names[] = {"select", "insert", "xor-select-insert", "xor-ignore-select",
                                             "xor-returning", "join", "new-blockset", "replay", "xor-hit", "import"};

static int read_only(int workload) { return workload == W_SELECT || workload == W_JOIN; }

typedef struct {
    int64_t group;          /* latency group size */
    double *samples;        /* per-op ns */
    int64_t count, in_group, last, start, end;
    int64_t cpu_ns; /* the thread's CPU time over the timed region */
} recorder;

static inline void rec_start(recorder *r)
{
    r->count = 0;
    r->in_group = 0;
    r->cpu_ns = thread_cpu_ns();
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
    r->cpu_ns = thread_cpu_ns() - r->cpu_ns;
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

/* The plain mode's one transaction around a whole phase: begun before the first op, committed after the last. */
static void plain_begin(engine *e, int workload)
{
    if (read_only(workload)) {
        exec_nonquery(e, S_BEGIN_READ);
        return;
    }
    exec_nonquery(e, S_BEGIN);
    e->batch_open = 1;
    if (layout == L_KEYMAP) {
        catch_up(e);
        e->caught_up = 1;
    }
}

static void plain_end(engine *e, int workload)
{
    if (read_only(workload)) {
        exec_nonquery(e, S_COMMIT);
        return;
    }
    commit_batch(e);
}

/*
 * KeyMapWrites.RestoreGuard before an import transaction's COMMIT (ARCHITECTURE M6): the insert guard dropped and
 * created again with its exact text, the file's triggers read back (the guard must hold that text, or the commit fails),
 * and the state row read for the version the file has at COMMIT, which the map takes on after it.
 */
static void restore_guard(engine *e, int64_t *generation, int64_t *schema)
{
    exec_text(e, statement_sql[S_LIFT_GUARD]);
    exec_text(e, statement_sql[S_RESTORE_GUARD]);
    sqlite3_stmt *rows = e->st[S_TRIGGER_ROWS];
    int rc, guard = 0;
    while ((rc = sq.step(rows)) == SQLITE_ROW) {
        const char *name = (const char *)sq.column_text(rows, 0), *sql = (const char *)sq.column_text(rows, 1);
        if (name && strcmp(name, "BlockDbGuardInsert") == 0)
            guard = sql && strcmp(sql, statement_sql[S_RESTORE_GUARD]) == 0;
    }
    check(e, rc, "KeyMapTriggerRows");
    sq.reset(rows);
    if (!guard)
        die("the KeyMap insert guard is not intact after the import restored it");
    sqlite3_stmt *state = e->st[S_READ_STATE];
    if (sq.step(state) != SQLITE_ROW)
        die("the KeyMap state row is gone: %s", sq.errmsg(e->db));
    *generation = sq.column_int64(state, 1);
    *schema = sq.column_int64(state, 2);
    sq.reset(state);
}

/*
 * The import workload (see the top of this file), keymap layout, one thread; `r` may be NULL (warm-up). Per row, both
 * modes: the next ID, the entry into the shared map (BlockKeyMap.AddUncommitted), the row inserted at its ID. Plain: the
 * guard dropped once before timing. Same design (BulkImport over KeyMapWrites): each transaction's catch-up lifts the
 * guard, which is restored and checked before its COMMIT.
 */
static void run_import(engine *e, const section *s, int64_t from, int64_t to, int64_t per, recorder *r, tally *t)
{
    if (from == to)
        return;
    if (mode == M_PLAIN)
        exec_text(e, statement_sql[S_LIFT_GUARD]);
    hashref h;
    sqlite3_stmt *insert = e->st[S_INSERT_WITH_ID];
    if (r)
        rec_start(r);
    for (int64_t u = from; u < to;) {
        plain_begin(e, W_IMPORT); /* BEGIN IMMEDIATE and the catch-up read that gives the next ID */
        if (mode == M_SAME)
            exec_text(e, statement_sql[S_LIFT_GUARD]);
        for (int64_t end = per > 0 && u + per < to ? u + per : to; u < end; u++) {
            hash_of(s, u, &h);
            int64_t id = e->next_id;
            kt_reserve(&map.table, 1);
            kt_add(&map.table, slot_of(key_of(h.bytes, h.length, s->sizes[u]), id));
            check(e, sq.bind_int64(insert, 1, id), "bind");
            check(e, sq.bind_blob(insert, 2, h.bytes, h.length, SQLITE_STATIC), "bind");
            check(e, sq.bind_int64(insert, 3, s->sizes[u]), "bind");
            check(e, sq.bind_null(insert, 4), "bind");
            exec_nonquery(e, S_INSERT_WITH_ID);
            e->max_inserted = id;
            e->next_id = id + 1;
            t->created++;
            t->ops++;
            if (r)
                rec_tick(r);
        }
        int64_t generation = map.generation, schema = map.schema_version;
        if (mode == M_SAME)
            restore_guard(e, &generation, &schema);
        plain_end(e, W_IMPORT); /* MaxBlockId raised, COMMIT */
        map.generation = generation;
        map.schema_version = schema;
    }
    if (r)
        rec_stop(r);
    for (int64_t u = from; u < to; u += check_every) {
        hash_of(s, u, &h);
        fnv_add(&t->digest, find_verified(e, &map.table, key_of(h.bytes, h.length, s->sizes[u]), &h, s->sizes[u]));
    }
}

/* Runs units [from, to) of a section; `r` may be NULL (warm-up). */
static void run_units(session *ss, int workload, const section *s, int64_t from, int64_t to, recorder *r, tally *t)
{
    engine *e = ss->e;
    if (workload == W_IMPORT) {
        run_import(e, s, from, to, e->commit_every, r, t);
        return;
    }
    int strategy = workload == W_XOR2 ? X_INSERT_OR_IGNORE : workload == W_XOR3 ? X_INSERT_RETURNING : X_SELECT_THEN_INSERT;
    sqlite3_int64 *ids = NULL;
    hashref h;
    char text[MAX_HASH_TEXT + 4];
    if (workload == W_NEW_BLOCKSET || workload == W_REPLAY) {
        int64_t largest = 1;
        for (int64_t g = from; g < to; g++)
            if (s->group_starts[g + 1] - s->group_starts[g] > largest)
                largest = s->group_starts[g + 1] - s->group_starts[g];
        ids = malloc((size_t)largest * sizeof *ids);
    }
    if (r)
        rec_start(r);
    if (mode == M_PLAIN)
        plain_begin(e, workload);
    for (int64_t u = from; u < to; u++) {
        switch (workload) {
        case W_SELECT: {
            lock_op(ss);
            hash_of(s, u, &h);
            sqlite3_int64 id = find_block(e, &h, s->sizes[u]);
            unlock_op(ss);
            fnv_add(&t->digest, id);
            t->ops++;
            break;
        }
        case W_INSERT: {
            lock_op(ss);
            hash_of(s, u, &h);
            sqlite3_int64 id = insert_block(e, &h, s->sizes[u]);
            unlock_op(ss);
            fnv_add(&t->digest, id);
            t->created++;
            t->ops++;
            break;
        }
        case W_XOR1:
        case W_XOR2:
        case W_XOR3:
        case W_XOR_HIT: {
            int created;
            lock_op(ss);
            hash_of(s, u, &h);
            sqlite3_int64 id = select_xor_insert(e, strategy, &h, s->sizes[u], &created);
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
            if (mode == M_SAME)
                enter_read(e);
            check(e, sq.bind_int64(list, 1, s->blockset_ids[u]), "bind");
            check(e, sq.bind_int64(list, 2, 0), "bind");
            int rc;
            while ((rc = sq.step(list)) == SQLITE_ROW) {
                int64_t index = sq.column_int64(list, 0);
                int64_t id = sq.column_int64(list, 1);
                /* The hash as bytes, as BlockDb's one listing gives it (a BlockKey): text is decoded, a BLOB copied. */
                if (layout == L_TEXT) {
                    const unsigned char *chars = sq.column_text(list, 2);
                    if (!chars)
                        die("NULL hash in join");
                    b64_decode((const char *)chars, sq.column_bytes(list, 2), (unsigned char *)text);
                } else {
                    const unsigned char *bytes = sq.column_blob(list, 2);
                    if (!bytes || sq.column_bytes(list, 2) > MAX_HASH_BYTES)
                        die("NULL or oversized hash in join");
                    memcpy(text, bytes, (size_t)sq.column_bytes(list, 2));
                }
                int64_t size = sq.column_int64(list, 3);
                fnv_add(&t->digest, index);
                fnv_add(&t->digest, id);
                fnv_add(&t->digest, size);
                rows++;
            }
            check(e, rc, "ListBlocksetBlocksFrom");
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
                hash_of(s, i, &h);
                ids[i - first] = select_xor_insert(e, X_SELECT_THEN_INSERT, &h, s->sizes[i], &created);
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
    if (mode == M_PLAIN)
        plain_end(e, workload);
    else
        commit_batch(e); /* CommitAsync: commits the write batch, or ends the read batch */
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

/* ---- The recreate workload (issue 25 item 2): blocks and blocksets rebuilt from a Duplicati-like stream. ---- */

/*
 * The stream file (bench/BlockDb.Bench/Recreate/RecreateStream.cs writes it; both sides read it whole before timing):
 * "BDBRCR01", then int64 blocks, files, entries, blocks per volume; per block (the volume index files) its 32-byte
 * hash, int64 size and int64 volume ID; per file (the file lists) its 32-byte full hash, int64 length, int32 block
 * count and that many int32 indexes into the blocks (a file list names its blocks by hash: the index only saves the
 * file the repeated 32 bytes; the loop resolves each block by its hash through its own map, as a recreate must).
 *
 * The PLAIN loop of a recreate, the limit BlockDb's ImportBlocksAsync + ImportBlocksetsAsync is measured against: one
 * prepared statement per row, --batch rows per transaction (BEGIN IMMEDIATE ... COMMIT), no savepoint, no check that a
 * row exists (the stream holds every block and file once), the hash -> ID map in memory (open addressing over the first
 * 8 bytes of the hash, the hash compared in memory on a hit: no verification read). keymap: rows at their IDs in ID
 * order (InsertBlockWithId, hash as a BLOB), the insert guard dropped before timing, MaxBlockId raised before each
 * COMMIT; text: InsertBlock with the hash as base64 TEXT, SQLite choosing the ID. Blocksets: InsertBlockset (full hash
 * as base64 TEXT, the length the stream gives) and one InsertBlocksetEntry per block. Prints blocks_ns/blocks_cpu_ns,
 * blocksets_ns/blocksets_cpu_ns, counts and the digest of every --check-every-th blockset's block IDs.
 */
typedef struct {
    int64_t blocks, files, entries, per_volume;
    const unsigned char *hashes; /* 32 bytes per block */
    int64_t *sizes, *volumes;
    const unsigned char **full_hashes;
    int64_t *lengths, *starts; /* starts: files + 1 */
    int32_t *refs;
} rstream;

static void read_rstream(const char *path, rstream *r)
{
    size_t length;
    char *data = read_file(path, &length);
    cursor c = {data, data + length};
    if (length < 8 || memcmp(data, "BDBRCR01", 8) != 0)
        die("%s is not a recreate stream", path);
    c.p += 8;
    r->blocks = take_i64(&c);
    r->files = take_i64(&c);
    r->entries = take_i64(&c);
    r->per_volume = take_i64(&c);
    if (r->blocks < 0 || r->files < 0 || r->entries < 0 || (uint64_t)(c.end - c.p) < (uint64_t)r->blocks * 48)
        die("recreate stream truncated");
    unsigned char *hashes = malloc((size_t)r->blocks * 32 + 1);
    r->sizes = malloc((size_t)r->blocks * 8 + 8);
    r->volumes = malloc((size_t)r->blocks * 8 + 8);
    for (int64_t i = 0; i < r->blocks; i++) {
        memcpy(hashes + i * 32, c.p, 32);
        c.p += 32;
        r->sizes[i] = take_i64(&c);
        r->volumes[i] = take_i64(&c);
    }
    r->hashes = hashes;
    r->full_hashes = malloc((size_t)r->files * sizeof *r->full_hashes + 1);
    r->lengths = malloc((size_t)r->files * 8 + 8);
    r->starts = malloc((size_t)(r->files + 1) * 8);
    r->refs = malloc((size_t)r->entries * 4 + 4);
    int64_t next = 0;
    for (int64_t f = 0; f < r->files; f++) {
        if (c.end - c.p < 32)
            die("recreate stream truncated");
        r->full_hashes[f] = (const unsigned char *)c.p;
        c.p += 32;
        r->lengths[f] = take_i64(&c);
        int32_t count = take_i32(&c);
        if (count < 0 || next + count > r->entries)
            die("recreate stream: file %lld has a bad block count", (long long)f);
        r->starts[f] = next;
        for (int32_t i = 0; i < count; i++, next++) {
            r->refs[next] = take_i32(&c);
            if (r->refs[next] < 0 || r->refs[next] >= r->blocks)
                die("recreate stream: file %lld names block %d", (long long)f, r->refs[next]);
        }
    }
    r->starts[r->files] = next;
    if (next != r->entries)
        die("recreate stream: %lld entries, header says %lld", (long long)next, (long long)r->entries);
}

static int b64_encode(const unsigned char *in, int n, char *out)
{
    int o = 0;
    for (int i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = b64_alphabet[(v >> 18) & 63];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < n ? b64_alphabet[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? b64_alphabet[v & 63] : '=';
    }
    out[o] = 0;
    return o;
}

/* The loop's hash -> ID map: 16-byte slots (first 8 bytes of the hash, ID; 0 = empty), the hash compared on a hit. */
typedef struct {
    uint64_t *slots;
    int64_t mask;
} rmap;

static void rmap_put(rmap *m, const unsigned char *hash, int64_t id)
{
    uint64_t k;
    memcpy(&k, hash, 8);
    int64_t i = (int64_t)(k & (uint64_t)m->mask);
    while (m->slots[2 * i + 1])
        i = (i + 1) & m->mask;
    m->slots[2 * i] = k;
    m->slots[2 * i + 1] = (uint64_t)id;
}

static int64_t rmap_find(const rmap *m, const rstream *r, const int64_t *ids_by_index, const unsigned char *hash, int64_t size)
{
    uint64_t k;
    memcpy(&k, hash, 8);
    for (int64_t i = (int64_t)(k & (uint64_t)m->mask); m->slots[2 * i + 1]; i = (i + 1) & m->mask) {
        int64_t index = (int64_t)m->slots[2 * i + 1] - 1;
        if (m->slots[2 * i] == k && memcmp(r->hashes + index * 32, hash, 32) == 0 && r->sizes[index] == size)
            return ids_by_index[index];
    }
    die("block not found in the map");
    return 0;
}

static int run_recreate(const char *db_path, const char *stream_path, int64_t batch, int blocks_only)
{
    rstream r;
    read_rstream(stream_path, &r);
    engine e;
    open_engine(&e, db_path, 0);
    int keymap = layout == L_KEYMAP;
    if (keymap)
        exec_text(&e, statement_sql[S_LIFT_GUARD]);
    int64_t per = batch > 0 ? batch : INT64_MAX;
    int64_t capacity = 1024;
    while (capacity < r.blocks * 2)
        capacity *= 2;
    rmap m = {calloc((size_t)capacity * 2, sizeof(uint64_t)), capacity - 1};
    int64_t *ids = malloc((size_t)r.blocks * 8 + 8); /* the ID each block got, by its index in the stream */
    sqlite3_stmt *insert = e.st[keymap ? S_INSERT_WITH_ID : S_INSERT];
    char text[MAX_HASH_TEXT + 4];
    int64_t next_id = 1;
    fnv digest = {14695981039346656037ULL};

    int64_t t0 = now_ns(), c0 = thread_cpu_ns();
    for (int64_t u = 0; u < r.blocks;) {
        exec_nonquery(&e, S_BEGIN);
        for (int64_t end = u + per < r.blocks ? u + per : r.blocks; u < end; u++) {
            const unsigned char *hash = r.hashes + u * 32;
            if (keymap) {
                check(&e, sq.bind_int64(insert, 1, next_id), "bind");
                check(&e, sq.bind_blob(insert, 2, hash, 32, SQLITE_STATIC), "bind");
                check(&e, sq.bind_int64(insert, 3, r.sizes[u]), "bind");
                check(&e, sq.bind_int64(insert, 4, r.volumes[u]), "bind");
                exec_nonquery(&e, S_INSERT_WITH_ID);
                ids[u] = next_id++;
            } else {
                int n = b64_encode(hash, 32, text);
                check(&e, sq.bind_text(insert, 1, text, n, SQLITE_STATIC), "bind");
                check(&e, sq.bind_int64(insert, 2, r.sizes[u]), "bind");
                check(&e, sq.bind_int64(insert, 3, r.volumes[u]), "bind");
                check(&e, sq.bind_null(insert, 4), "bind");
                exec_nonquery(&e, S_INSERT);
                ids[u] = sq.last_insert_rowid(e.db);
            }
            rmap_put(&m, hash, u + 1);
        }
        if (keymap) {
            check(&e, sq.bind_int64(e.st[S_RAISE_MAX], 1, next_id - 1), "bind");
            exec_nonquery(&e, S_RAISE_MAX);
        }
        exec_nonquery(&e, S_COMMIT);
    }
    int64_t t1 = now_ns(), c1 = thread_cpu_ns();

    sqlite3_stmt *bs = e.st[S_INSERT_BLOCKSET], *entry = e.st[S_INSERT_ENTRY];
    for (int64_t f = 0; f < (blocks_only ? 0 : r.files);) {
        exec_nonquery(&e, S_BEGIN);
        for (int64_t end = f + per < r.files ? f + per : r.files; f < end; f++) {
            int n = b64_encode(r.full_hashes[f], 32, text);
            check(&e, sq.bind_int64(bs, 1, r.lengths[f]), "bind");
            check(&e, sq.bind_text(bs, 2, text, n, SQLITE_STATIC), "bind");
            exec_nonquery(&e, S_INSERT_BLOCKSET);
            sqlite3_int64 blockset = sq.last_insert_rowid(e.db);
            if (blockset != f + 1)
                die("blockset %lld got ID %lld", (long long)f, (long long)blockset);
            check(&e, sq.bind_int64(entry, 1, blockset), "bind");
            int check_this = f % check_every == 0;
            for (int64_t i = r.starts[f]; i < r.starts[f + 1]; i++) {
                int64_t index = r.refs[i];
                int64_t id = rmap_find(&m, &r, ids, r.hashes + index * 32, r.sizes[index]);
                check(&e, sq.bind_int64(entry, 2, i - r.starts[f]), "bind");
                check(&e, sq.bind_int64(entry, 3, id), "bind");
                exec_nonquery(&e, S_INSERT_ENTRY);
                if (check_this)
                    fnv_add(&digest, id);
            }
        }
        exec_nonquery(&e, S_COMMIT);
    }
    int64_t t2 = now_ns(), c2 = thread_cpu_ns();

    sqlite3_stmt *counts = e.st[S_COUNTS];
    if (sq.step(counts) != SQLITE_ROW)
        die("Counts failed: %s", sq.errmsg(e.db));
    printf("libversion=%s\ncounts=%lld,%lld,%lld\n", sq.libversion(), (long long)sq.column_int64(counts, 0),
           (long long)sq.column_int64(counts, 1), (long long)sq.column_int64(counts, 2));
    sq.reset(counts);
    printf("blocks_ns=%" PRId64 "\nblocks_cpu_ns=%" PRId64 "\nblocksets_ns=%" PRId64 "\nblocksets_cpu_ns=%" PRId64 "\n",
           t1 - t0, c1 - c0, t2 - t1, c2 - c1);
    printf("digest=%" PRIu64 "\n", digest.h);
    for (int i = 0; i < S_COUNT; i++)
        sq.finalize(e.st[i]);
    sq.close_v2(e.db);
    printf("status=ok\n");
    return 0;
}

static int name_index(const char *name, const char *const *names, int count, const char *what)
{
    for (int i = 0; i < count; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    die("unknown %s %s", what, name);
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
    static const char *const layout_names[] = {"text", "blob", "keymap"};
    static const char *const mode_names[] = {"same", "plain"};
    const char *lib = arg_value(argc, argv, "--lib", NULL);
    run_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.db_path = arg_value(argc, argv, "--db", NULL);
    if (strcmp(arg_value(argc, argv, "--workload", NULL), "recreate") == 0) {
        layout = name_index(arg_value(argc, argv, "--layout", "text"), layout_names, 3, "layout");
        if (layout == L_BLOB)
            die("the recreate workload runs on the keymap and text layouts");
        check_every = atoll(arg_value(argc, argv, "--check-every", "1"));
        if (check_every < 1)
            die("--check-every must be at least 1");
        prefault_heap(atol(arg_value(argc, argv, "--prefault-mb", "0")));
        load_library(lib);
        read_sql(arg_value(argc, argv, "--sql", NULL));
        return run_recreate(arg_value(argc, argv, "--db", NULL), arg_value(argc, argv, "--stream", NULL), atoll(arg_value(argc, argv, "--batch", "0")),
                            atoi(arg_value(argc, argv, "--blocks-only", "0")));
    }
    cfg.workload = name_index(arg_value(argc, argv, "--workload", NULL), workload_names, (int)(sizeof workload_names / sizeof *workload_names), "workload");
    layout = name_index(arg_value(argc, argv, "--layout", "text"), layout_names, 3, "layout");
    mode = name_index(arg_value(argc, argv, "--mode", "same"), mode_names, 2, "mode");
    cfg.batch = atoll(arg_value(argc, argv, "--batch", "0"));
    cfg.threads = atoi(arg_value(argc, argv, "--threads", "1"));
    cfg.shared = atoi(arg_value(argc, argv, "--shared", "0"));
    int64_t reads = atoll(arg_value(argc, argv, "--reads", "0"));
    int64_t default_reads = atoll(arg_value(argc, argv, "--default-reads", "256"));
    int64_t read_ms = atoll(arg_value(argc, argv, "--read-ms", "50"));
    int64_t group = atoll(arg_value(argc, argv, "--group", "1"));
    const char *latency_path = arg_value(argc, argv, "--latency", NULL);
    if (cfg.threads < 1 || group < 1 || reads < 0 || read_ms < 1)
        die("threads, group and read-ms must be at least 1, reads at least 0");
    if (cfg.threads > 1 && (layout == L_KEYMAP || mode == M_PLAIN))
        die("the %s %s baseline runs one thread", layout_names[layout], mode_names[mode]);
    if (layout == L_KEYMAP && (cfg.workload == W_XOR2 || cfg.workload == W_XOR3))
        die("the KeyMap layout runs select-then-insert only (BlockDb refuses the other strategies with it)");
    check_every = atoll(arg_value(argc, argv, "--check-every", "1"));
    if (cfg.workload == W_IMPORT && (layout != L_KEYMAP || cfg.threads != 1 || check_every < 1))
        die("the import workload runs on the keymap layout, one thread, --check-every at least 1");

    b64_init();
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
    if (mode == M_PLAIN && layout != L_TEXT) {
        decode_section(&cfg.warm);
        decode_section(&cfg.timed);
    }

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
    int wal = 0;
    for (int i = 0; i < 7; i++) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA %s", pragmas[i]);
        query_text(first, sql, value, sizeof value);
        printf("pragma.%s=%s\n", pragmas[i], value);
        if (i == 0)
            wal = strcmp(value, "wal") == 0;
    }

    /* BlockRepository: ReadsPerTransaction, else the default in WAL mode and 1 (off) in the rollback-journal modes. */
    int64_t reads_limit = mode == M_PLAIN ? 1 : reads > 0 ? reads : wal ? default_reads : 1;
    for (int i = 0; i < cfg.threads; i++) {
        workers[i].ss.e->reads_limit = reads_limit;
        workers[i].ss.e->read_ms = read_ms;
    }
    printf("layout=%s\nmode=%s\nreads_per_transaction=%" PRId64 "\n", layout_names[layout], mode_names[mode], reads_limit);

    pthread_t *ids = calloc((size_t)cfg.threads, sizeof *ids);
    for (int i = 0; i < cfg.threads; i++)
        if (pthread_create(&ids[i], NULL, worker_main, &workers[i]) != 0)
            die("pthread_create failed");
    for (int i = 0; i < cfg.threads; i++)
        pthread_join(ids[i], NULL);

    int64_t start = workers[0].rec.start, end = workers[0].rec.end, ops = 0, units = 0, created = 0, samples = 0, cpu = 0;
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
        cpu += w->rec.cpu_ns;
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
    printf("cpu_ns=%" PRId64 "\n", cpu);
    printf("elapsed_ns=%" PRId64 "\nops=%" PRId64 "\nunits=%" PRId64 "\ncreated=%" PRId64 "\nsamples=%" PRId64 "\n",
           end - start, ops, units, created, samples);
    printf("digest=%" PRIu64 "\n", cfg.threads == 1 ? workers[0].result.digest.h : 0);
    if (layout == L_KEYMAP)
        printf("keymap_bytes=%lld\n", (long long)(map.table.capacity * (int64_t)sizeof(uint64_t)));
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
