// Sign-flip permutation counts for soft pairwise accuracy's bootstrap (stats/agreement.py, spa_resampled).
//
// pce (mt-metrics-eval) draws, for each of P permutations, one +-1 sign per item and takes each system's
// signed sum of its item scores; a pair's p-value is the share of permutations whose difference of signed
// sums reaches the observed difference of plain sums. BLAS does the signed sums as a float32 product of the
// P x n sign matrix with the n x rows scores: 2 P n rows flops, the whole cost of a bootstrap (one product
// per resample). Signs take only two values, so a "four Russians" table does it with a sixth of the
// additions and no multiplications: the items in blocks of 6, and for each block and row the 64 signed
// sums of its 6 scores (one per sign pattern); a permutation's signed sum is then one table entry per
// block, picked by the 6 signs' bits. Rows go 32 at a time (two AVX-512 registers), four permutations side
// by side (independent chains of adds), blocks 16 at a time (their tables, 128 KiB, stay in the core's
// cache while every permutation reads them). The loop is bound by its loads (two 64-byte entries per block,
// permutation and 32 rows): measured here per resample of 15 systems x 1,500 items x 11 matrices, 1,000
// permutations: 3.8 ms with blocks of 6, 4.3 ms of 4, 4.9 ms of 8 (their tables cost more to build than
// the loads they save), against 5.5 ms for BLAS's product alone.
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

constexpr size_t PERM_LANES = 32;    // rows per slice
constexpr size_t PERM_TOGETHER = 4;  // permutations summed side by side
constexpr size_t PERM_BITS = 6;      // items per block: 2^6 patterns per block
constexpr size_t PERM_PATTERNS = size_t{1} << PERM_BITS;
constexpr size_t PERM_TILE = 16;     // blocks whose tables (16 x 8 KiB) are built and read together

// GCC's vector extension (the compiler does not vectorise the lanes on its own): one AVX-512 add for 16
// lanes, two AVX2 or four SSE adds
typedef float PermVec __attribute__((vector_size(16 * sizeof(float))));
constexpr size_t PERM_VECS = PERM_LANES / 16;

// sums: (slices * PERM_LANES, P), row by row: each permutation's signed sum of each row over the resample's
// items idx (m), xt (n, rows) the scores item by item, codes (P, blocks) the sign patterns (bit k of a
// block's code: the sign of its item k, 1: +). Slice by slice (32 rows), tile by tile (16 blocks): the
// tile's tables built (entry 0 the sum of the block's negated scores, entry v entry v minus its lowest bit
// plus twice that item's score), then every permutation's running sums (kept in `run` between tiles)
// read one entry per block. Bound by loads: two 64-byte entries per block, permutation and slice.
__attribute__((target_clones("avx512f", "avx2", "default")))
static void perm_sums(const float* xt, size_t rows, const int64_t* idx, size_t m, const uint8_t* codes,
                      size_t perms, float* sums) {
    size_t slices = (rows + PERM_LANES - 1) / PERM_LANES, blocks = (m + PERM_BITS - 1) / PERM_BITS;
    size_t groups = (perms + PERM_TOGETHER - 1) / PERM_TOGETHER;
    std::vector<float> table(PERM_TILE * PERM_PATTERNS * PERM_LANES);
    // floats, not PermVec: a vector's storage need not have PermVec's 64-byte alignment (memcpy reads it)
    std::vector<float> run(groups * PERM_TOGETHER * PERM_LANES);
    for (size_t c = 0; c < slices; ++c) {
        size_t lanes = std::min(PERM_LANES, rows - c * PERM_LANES);
        std::fill(run.begin(), run.end(), 0.0f);
        for (size_t b0 = 0; b0 < blocks; b0 += PERM_TILE) {
            size_t b1 = std::min(blocks, b0 + PERM_TILE);
            for (size_t b = b0; b < b1; ++b) {
                float col[PERM_BITS][PERM_LANES] = {};
                for (size_t k = 0; k < PERM_BITS && PERM_BITS * b + k < m; ++k)
                    std::memcpy(col[k], xt + static_cast<size_t>(idx[PERM_BITS * b + k]) * rows + c * PERM_LANES,
                                lanes * sizeof(float));
                float* t = table.data() + (b - b0) * PERM_PATTERNS * PERM_LANES;
                for (size_t l = 0; l < PERM_LANES; ++l) {
                    float v = -col[0][l];
                    for (size_t k = 1; k < PERM_BITS; ++k) v -= col[k][l];
                    t[l] = v;
                }
                for (size_t v = 1; v < PERM_PATTERNS; ++v) {
                    size_t k = static_cast<size_t>(__builtin_ctzll(v));
                    const float* prev = t + (v & (v - 1)) * PERM_LANES;
                    float* cur = t + v * PERM_LANES;
                    for (size_t l = 0; l < PERM_LANES; ++l) cur[l] = prev[l] + 2.0f * col[k][l];
                }
            }
            for (size_t g = 0; g < groups; ++g) {
                size_t p = g * PERM_TOGETHER;
                const uint8_t* code[PERM_TOGETHER];
                for (size_t q = 0; q < PERM_TOGETHER; ++q)
                    code[q] = codes + std::min(p + q, perms - 1) * blocks;  // past the end: a copy, not kept
                PermVec acc[PERM_TOGETHER][PERM_VECS];
                std::memcpy(acc, &run[p * PERM_LANES], sizeof acc);
                for (size_t b = b0; b < b1; ++b) {
                    const float* tb = table.data() + (b - b0) * PERM_PATTERNS * PERM_LANES;
                    for (size_t q = 0; q < PERM_TOGETHER; ++q) {
                        const float* e = tb + code[q][b] * PERM_LANES;
                        for (size_t v = 0; v < PERM_VECS; ++v) {
                            PermVec x;
                            std::memcpy(&x, e + 16 * v, sizeof x);
                            acc[q][v] += x;
                        }
                    }
                }
                std::memcpy(&run[p * PERM_LANES], acc, sizeof acc);
            }
        }
        for (size_t p = 0; p < perms; ++p)
            for (size_t l = 0; l < PERM_LANES; ++l) sums[(c * PERM_LANES + l) * perms + p] = run[p * PERM_LANES + l];
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
