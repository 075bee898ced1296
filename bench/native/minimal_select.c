/*
 * minimal_select.c - a standalone check of the harness's C figures (docs/BENCHMARKS.md, "Checking the C figures").
 *
 * The plainest loop SQLite allows for "find an existing block by hash and size": the same libe_sqlite3.so, the
 * Recommended pragmas, FindBlock's text, `ops` random existing blocks (uniform over the file's IDs, like the
 * harness's select stream) looked up inside ONE read transaction, after `warmup` untimed lookups on the same
 * connection. Nothing of the harness is shared but the library and the file.
 *
 *   cc -O2 -std=c11 -o minimal_select minimal_select.c -Wl,--no-as-needed -lm -ldl  (libe_sqlite3.so needs libm loaded)
 *   minimal_select <libe_sqlite3.so> <copy of a TextHash or BlobHash template> <ops> <warmup>
 * prints: ops=<n> elapsed_ns=<ns> ops_per_s=<rate>
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
static int (*open_v2)(const char *, sqlite3 **, int, const char *);
static int (*exec)(sqlite3 *, const char *, void *, void *, char **);
static int (*prepare)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
static int (*step)(sqlite3_stmt *), (*reset)(sqlite3_stmt *), (*column_type)(sqlite3_stmt *, int), (*column_bytes)(sqlite3_stmt *, int);
static int (*bind_int64)(sqlite3_stmt *, int, long long), (*bind_blob)(sqlite3_stmt *, int, const void *, int, void *);
static int (*bind_text)(sqlite3_stmt *, int, const char *, int, void *);
static long long (*column_int64)(sqlite3_stmt *, int);
static const void *(*column_blob)(sqlite3_stmt *, int);

static long long now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return fprintf(stderr, "usage: %s lib db ops warmup\n", argv[0]), 2;
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib)
        return fprintf(stderr, "%s\n", dlerror()), 2;
    *(void **)&open_v2 = dlsym(lib, "sqlite3_open_v2"); *(void **)&exec = dlsym(lib, "sqlite3_exec");
    *(void **)&prepare = dlsym(lib, "sqlite3_prepare_v2"); *(void **)&step = dlsym(lib, "sqlite3_step");
    *(void **)&reset = dlsym(lib, "sqlite3_reset"); *(void **)&column_type = dlsym(lib, "sqlite3_column_type");
    *(void **)&column_bytes = dlsym(lib, "sqlite3_column_bytes"); *(void **)&bind_int64 = dlsym(lib, "sqlite3_bind_int64");
    *(void **)&bind_blob = dlsym(lib, "sqlite3_bind_blob"); *(void **)&bind_text = dlsym(lib, "sqlite3_bind_text");
    *(void **)&column_int64 = dlsym(lib, "sqlite3_column_int64"); *(void **)&column_blob = dlsym(lib, "sqlite3_column_blob");
    int ops = atoi(argv[3]), warmup = atoi(argv[4]), n = ops + warmup;
    sqlite3 *db;
    if (open_v2(argv[2], &db, 2 /* READWRITE */, NULL) != 0)
        return fprintf(stderr, "cannot open %s\n", argv[2]), 2;
    exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;"
             " PRAGMA mmap_size=67108864; PRAGMA threads=8; PRAGMA busy_timeout=10000", NULL, NULL, NULL);

    /* The blocks to find, read before anything is timed. */
    sqlite3_stmt *max, *get, *find;
    prepare(db, "SELECT MAX(\"ID\") FROM \"Block\"", -1, &max, NULL);
    step(max);
    long long rows = column_int64(max, 0);
    prepare(db, "SELECT \"Hash\", \"Size\", typeof(\"Hash\") = 'text' FROM \"Block\" WHERE \"ID\" = ?", -1, &get, NULL);
    prepare(db, "SELECT \"ID\" FROM \"Block\" WHERE \"Hash\" = @Hash AND \"Size\" = @Size", -1, &find, NULL);
    char (*hash)[96] = calloc((size_t)n, sizeof *hash);
    int *length = calloc((size_t)n, sizeof *length), *text = calloc((size_t)n, sizeof *text);
    long long *size = calloc((size_t)n, sizeof *size), *id = calloc((size_t)n, sizeof *id);
    srand(42);
    for (int i = 0; i < n; i++) {
        id[i] = 1 + (long long)(((unsigned long long)rand() << 16 ^ (unsigned long long)rand()) % (unsigned long long)rows);
        bind_int64(get, 1, id[i]);
        if (step(get) != 100)
            return fprintf(stderr, "no block %lld\n", id[i]), 2;
        length[i] = column_bytes(get, 0);
        memcpy(hash[i], column_blob(get, 0), (size_t)length[i]);
        size[i] = column_int64(get, 1);
        text[i] = (int)column_int64(get, 2);
        reset(get);
    }

    long long start = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || i == warmup) {
            if (i == warmup) {
                exec(db, "COMMIT", NULL, NULL, NULL);
                start = now();
            }
            exec(db, "BEGIN", NULL, NULL, NULL); /* one read transaction for the warm-up, one for the timed lookups */
        }
        if (text[i])
            bind_text(find, 1, hash[i], length[i], NULL);
        else
            bind_blob(find, 1, hash[i], length[i], NULL);
        bind_int64(find, 2, size[i]);
        if (step(find) != 100 || column_int64(find, 0) != id[i])
            return fprintf(stderr, "block %lld not found\n", id[i]), 2;
        reset(find);
    }
    exec(db, "COMMIT", NULL, NULL, NULL);
    long long elapsed = now() - start;
    printf("ops=%d elapsed_ns=%lld ops_per_s=%.0f\n", ops, elapsed, ops * 1e9 / (double)elapsed);
    return 0;
}
