// Sign-flip permutation counts for soft pairwise accuracy's bootstrap (meta/stats.py, spa_resample_counts).
//
// pce (mt-metrics-eval) draws, for each of P permutations, one +-1 sign per item and takes each system's
// signed sum of its item scores; a pair's p-value is the share of permutations whose difference of signed
// sums reaches the observed difference of plain sums. BLAS does the signed sums as a float32 product of the
// P x n sign matrix with the n x rows scores: 2 P n rows flops, the whole cost of a bootstrap (one product
// per resample). Signs take only two values, so a "four Russians" table does it with a quarter of the
// additions and no multiplications: the items in blocks of 4, and for each block and row the 16 signed
// sums of its 4 scores (one per sign pattern); a permutation's signed sum is then one table entry per
// block, picked by the 4 signs' bits. Rows go 32 at a time (two AVX-512 registers), four permutations side
// by side (independent chains of adds), and a block's entries of those rows (2 KiB) are read in place, so
// the running sums never leave the registers; the tables of 32 rows (about 770 KiB for 1,500 items) stay
// in the core's cache while every permutation reads them.
//
// The sums are float32 as pce's, added in block order: not pce's bits (BLAS adds in its own order), which
// the interval does not need; the point value stays pce's own product (stats.p_values). Rows with equal
// scores get equal sums (the same operations in the same order), so exact ties count as pce counts them.
#pragma once

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

namespace tgm {

constexpr size_t PERM_LANES = 32;    // rows per table slice
constexpr size_t PERM_TOGETHER = 4;  // permutations summed side by side

// GCC's vector extension (the compiler does not vectorise the lanes on its own): one AVX-512 add for 16
// lanes, two AVX2 or four SSE adds
typedef float PermVec __attribute__((vector_size(16 * sizeof(float))));
constexpr size_t PERM_VECS = PERM_LANES / 16;

// tables: (row slices, blocks, 16 patterns, PERM_LANES); pattern bit k is the sign of item 4 b + k (1: +).
// xt: (n, rows), the scores item by item; the resample's items idx (m).
__attribute__((target_clones("avx512f", "avx2", "default")))
static void perm_tables(const float* xt, size_t rows, const int64_t* idx, size_t m, float* tables) {
    size_t slices = (rows + PERM_LANES - 1) / PERM_LANES, blocks = (m + 3) / 4;
    for (size_t c = 0; c < slices; ++c) {
        size_t lanes = std::min(PERM_LANES, rows - c * PERM_LANES);
        for (size_t b = 0; b < blocks; ++b) {
            float col[4][PERM_LANES] = {};
            for (size_t k = 0; k < 4 && 4 * b + k < m; ++k)
                std::memcpy(col[k], xt + static_cast<size_t>(idx[4 * b + k]) * rows + c * PERM_LANES,
                            lanes * sizeof(float));
            float* t = tables + (c * blocks + b) * 16 * PERM_LANES;
            for (size_t l = 0; l < PERM_LANES; ++l) t[l] = -col[0][l] - col[1][l] - col[2][l] - col[3][l];
            for (unsigned v = 1; v < 16; ++v) {
                unsigned k = static_cast<unsigned>(__builtin_ctz(v));
                const float* prev = t + (v & (v - 1)) * PERM_LANES;
                float* cur = t + v * PERM_LANES;
                for (size_t l = 0; l < PERM_LANES; ++l) cur[l] = prev[l] + 2.0f * col[k][l];
            }
        }
    }
}

// sums: (slices * PERM_LANES, P), row by row, from the tables and the (P, blocks) sign patterns. Bound by
// loads (two 64-byte entries and four pattern bytes per block and four permutations): tiling the blocks so
// their entries stay in the first-level cache, or blocks of 8 items (a quarter of the loads, 16 times the
// tables), measured slower here.
__attribute__((target_clones("avx512f", "avx2", "default")))
static void perm_sums(const float* tables, size_t slices, size_t blocks, const uint8_t* codes, size_t perms,
                      float* sums) {
    for (size_t c = 0; c < slices; ++c) {
        const float* tc = tables + c * blocks * 16 * PERM_LANES;
        for (size_t p = 0; p < perms; p += PERM_TOGETHER) {
            size_t together = std::min(PERM_TOGETHER, perms - p);
            const uint8_t* code[PERM_TOGETHER];
            for (size_t q = 0; q < PERM_TOGETHER; ++q)
                code[q] = codes + std::min(p + q, perms - 1) * blocks;  // past the end: a copy, not kept
            PermVec acc[PERM_TOGETHER][PERM_VECS] = {};
            for (size_t b = 0; b < blocks; ++b) {
                const float* tb = tc + b * 16 * PERM_LANES;
                for (size_t q = 0; q < PERM_TOGETHER; ++q) {
                    const float* e = tb + code[q][b] * PERM_LANES;
                    for (size_t v = 0; v < PERM_VECS; ++v) {
                        PermVec x;
                        std::memcpy(&x, e + 16 * v, sizeof x);
                        acc[q][v] += x;
                    }
                }
            }
            for (size_t q = 0; q < together; ++q) {
                float lane[PERM_LANES];
                std::memcpy(lane, acc[q], sizeof lane);
                for (size_t l = 0; l < PERM_LANES; ++l) sums[(c * PERM_LANES + l) * perms + p + q] = lane[l];
            }
        }
    }
}

// counts[g][a][b] (a < b, within each group of `systems` rows): permutations with
// sums[a][p] - sums[b][p] >= test[g][a][b]; sums row by row (rows, P)
__attribute__((target_clones("avx512f", "avx2", "default")))
static void perm_counts(const float* sums, size_t perms, size_t groups, size_t systems, const float* test,
                        int32_t* counts) {
    for (size_t g = 0; g < groups; ++g)
        for (size_t a = 0; a < systems; ++a) {
            const float* sa = sums + (g * systems + a) * perms;
            for (size_t b = a + 1; b < systems; ++b) {
                const float* sb = sums + (g * systems + b) * perms;
                float t = test[(g * systems + a) * systems + b];
                int32_t n = 0;
                for (size_t p = 0; p < perms; ++p) n += (sa[p] - sb[p] >= t) ? 1 : 0;
                counts[(g * systems + a) * systems + b] = n;
            }
        }
}

}  // namespace tgm
