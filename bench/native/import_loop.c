/*
 * The plain C limit of a rebuild (issue 25 item 2): a loop inserting N new blocks into the Block table of a file
 * BlockDb created (KeyMap layout: its schema and indexes, so the same pages and the same BlockVolume index), in
 * transactions of T rows, with what a rebuild cannot avoid: each row's 32-byte hash made as the input streams (four
 * splitmix64 words of the row number, as BlockDb.Stress's import makes them: as random as SHA-256 for the index, and a
 * few ns, so neither side's figure is its hash function's), the row inserted at its ID, and an in-memory map of
 * 8-byte slots (32-bit key, 32-bit ID; open addressing, doubled at half load) filled as rows go in.
 * BlockDb's pragmas (Recommended: WAL, synchronous=NORMAL, temp_store=MEMORY, cache_size=-65536, mmap 64 MiB).
 * No per-row trigger: the guard BlockDbGuardInsert is dropped before the timed loop, unless "trigger" is given.
 *
 *   import_loop PATH BLOCKS PER_TRANSACTION [trigger]
 *
 * Prints "rows N seconds S rows_per_second R" for the timed loop (first BEGIN to the last COMMIT).
 * Built by bench/native/Makefile (target import-loop), linked to the libe_sqlite3.so the .NET side loads.
 */
#define _POSIX_C_SOURCE 199309L
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(int rc, sqlite3 *db, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "%s: %d %s\n", what, rc, sqlite3_errmsg(db));
        exit(1);
    }
}

static void exec(sqlite3 *db, const char *sql) { check(sqlite3_exec(db, sql, NULL, NULL, NULL), db, sql); }

/* Word j of row i's hash: splitmix64's output for the state (4i + j + 1) * golden ratio (BlockDb.Stress: RowHash). */
static uint64_t mix(uint64_t i, uint64_t j)
{
    uint64_t z = (4 * i + j + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t *slots;
static uint64_t capacity, used;

static void map_put(uint32_t key, uint32_t id);

static void map_grow(void)
{
    uint64_t *old = slots, old_capacity = capacity;
    capacity = capacity ? capacity * 2 : 1024;
    slots = calloc(capacity, sizeof *slots);
    used = 0;
    for (uint64_t i = 0; i < old_capacity; i++)
        if (old[i])
            map_put((uint32_t)(old[i] >> 32), (uint32_t)old[i]);
    free(old);
}

static void map_put(uint32_t key, uint32_t id)
{
    if ((used + 1) * 2 > capacity)
        map_grow();
    uint64_t i = key & (capacity - 1);
    while (slots[i])
        i = (i + 1) & (capacity - 1);
    slots[i] = ((uint64_t)key << 32) | id;
    used++;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: import_loop PATH BLOCKS PER_TRANSACTION [trigger]\n");
        return 2;
    }
    long blocks = atol(argv[2]), per = atol(argv[3]);
    int keep_trigger = argc > 4 && strcmp(argv[4], "trigger") == 0;
    sqlite3 *db;
    check(sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL), db, "open");
    exec(db, "PRAGMA busy_timeout=10000; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA temp_store=MEMORY;"
             " PRAGMA cache_size=-65536; PRAGMA mmap_size=67108864; PRAGMA threads=8");
    if (!keep_trigger)
        exec(db, "DROP TRIGGER IF EXISTS \"BlockDbGuardInsert\"");
    sqlite3_stmt *insert;
    check(sqlite3_prepare_v2(db, "INSERT INTO \"Block\" (\"ID\", \"Hash\", \"Size\", \"VolumeID\") VALUES (?1, ?2, ?3, ?4)", -1, &insert, NULL), db, "prepare");
    uint64_t hash[4];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < blocks;) {
        exec(db, "BEGIN IMMEDIATE");
        for (long end = i + per < blocks ? i + per : blocks; i < end; i++) {
            for (int j = 0; j < 4; j++)
                hash[j] = mix((uint64_t)i, (uint64_t)j); /* little-endian bytes on x64, as the .NET side writes them */
            sqlite3_bind_int64(insert, 1, i + 1);
            sqlite3_bind_blob(insert, 2, hash, sizeof hash, SQLITE_STATIC);
            sqlite3_bind_int64(insert, 3, 4096);
            sqlite3_bind_null(insert, 4);
            check(sqlite3_step(insert), db, "insert");
            sqlite3_reset(insert);
            uint32_t key;
            memcpy(&key, hash, sizeof key);
            map_put(key, (uint32_t)(i + 1));
        }
        exec(db, "COMMIT");
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("rows %ld seconds %.3f rows_per_second %.0f map_slots %llu\n", blocks, seconds, blocks / seconds, (unsigned long long)used);
    sqlite3_finalize(insert);
    check(sqlite3_close(db), db, "close");
    return 0;
}
