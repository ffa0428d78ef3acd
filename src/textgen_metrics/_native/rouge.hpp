// ROUGE: rouge-score's tokenizer and stemmer use, n-gram matching, LCS, the summary-level union
// LCS, ROUGE-1.5.5's weighted LCS and skip-bigrams. Token sequences are vectors of interned ids;
// ids only need to agree within one (prediction, reference) pair.
#pragma once

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "common.hpp"
#include "porter.hpp"

namespace tgm {

// ---------------------------------------------------------------------------------------------
// rouge-score 0.1.2 tokenize(): lower(), every run outside [a-z0-9] becomes a space, split; with
// the stemmer, Porter on tokens longer than 3 characters, then tokens that are not [a-z0-9]+
// dropped.
struct RougeTokenizer {
    bool use_stemmer = false;
    Interner vocab;                // the tokens (stems, with the stemmer): their ids are what is scored
    WordMap words;                 // a word as read -> its token's id in vocab, or DROP
    static constexpr u32 DROP = 0xFFFFFFFEu;
    std::vector<char> buf;         // the word being read (vector: its push_back inlines)

    // p[0 .. n) is a word; with the stemmer, it is overwritten by its stem
    u32 finish_word(char* p, size_t n) {
        bool fresh;
        u32& f = words.lookup(p, n, fresh);
        if (!fresh) return f;
        if (!use_stemmer || n <= 3) return f = vocab.intern(p, n);
        size_t k = porter_stem_ascii_lower(p, n);
        bool valid = k > 0;
        for (size_t i = 0; i < k; ++i)
            if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9'))) valid = false;
        return f = valid ? vocab.intern(p, k) : DROP;
    }

    void push(std::vector<u32>& out) {
        if (buf.empty()) return;
        u32 f = finish_word(buf.data(), buf.size());
        if (f != DROP) out.push_back(f);
        buf.clear();
    }

    // Tokens of s appended to out; with split_lines, a '\n' ends a sentence: sentence starts
    // (indices into out) are appended to starts for each non-empty line.
    void tokenize(const char* s, size_t n, std::vector<u32>& out, std::vector<u32>* starts) {
        buf.clear();
        bool line_open = false;
        size_t i = 0;
        while (i < n) {
            u8 c = static_cast<u8>(s[i]);
            if (c < 0x80) {
                ++i;
                if (c == '\n' && starts) {
                    push(out);
                    line_open = false;
                    continue;
                }
                if (starts && !line_open) {
                    starts->push_back(static_cast<u32>(out.size()));
                    line_open = true;
                }
                if (c >= 'A' && c <= 'Z') {
                    buf.push_back(static_cast<char>(c + 32));
                } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
                    buf.push_back(static_cast<char>(c));
                } else {
                    push(out);
                }
                continue;
            }
            if (starts && !line_open) {
                starts->push_back(static_cast<u32>(out.size()));
                line_open = true;
            }
            u32 cp = decode_utf8(s, n, i);
            // lower() of the code point: only U+0130 ("i" + U+0307) and letters such as U+212A
            // KELVIN SIGN ("k") give ASCII letters; U+03A3 lowers to a Greek sigma either way
            thread_local std::vector<u32> mapped;
            mapped.clear();
            if (!lower_cp(cp, mapped)) mapped.push_back(0x3C3);
            for (u32 m : mapped) {
                if (m < 0x80 && ((m >= 'a' && m <= 'z') || (m >= '0' && m <= '9')))
                    buf.push_back(static_cast<char>(m));
                else
                    push(out);
            }
        }
        push(out);
    }

    // Room for the words of a batch of `bytes` bytes of text, as the batch begins: no table grows
    // (and moves every word) while it is read. The number of distinct words is guessed by Heaps'
    // law, 40 * sqrt(tokens) at about 6 bytes a token (WordNet glosses: 10.4k guessed for the
    // 9.5k words of 1,000 pairs; 104k for the 52.5k of 100,000, a table twice the size needed);
    // a guess too low only leaves some growing to do, which moves slots without hashing.
    void reserve_for(size_t bytes) {
        size_t tokens = bytes / 6;
        size_t guess = static_cast<size_t>(40.0 * std::sqrt(static_cast<double>(tokens)));
        if (guess > tokens) guess = tokens;
        if (guess > (size_t(1) << 21)) guess = size_t(1) << 21;
        words.reserve(guess);
        vocab.reserve(use_stemmer ? guess * 3 / 4 : guess);
    }

    void reset_if_large() {
        if (vocab.size() + words.size() > (1u << 22)) {
            vocab.clear();
            words.clear();
        }
    }
};

// ---------------------------------------------------------------------------------------------
// A text ready for scoring: all tokens, and the tokens of its sentence units.
struct Doc {
    std::vector<u32> toks;
    std::vector<u32> stoks;  // sentence tokens, end to end
    std::vector<u32> sbeg;   // sentence k is stoks[sbeg[k] .. sbeg[k+1])
    void clear() {
        toks.clear();
        stoks.clear();
        sbeg.clear();
    }
    size_t nsent() const { return sbeg.empty() ? 0 : sbeg.size() - 1; }
};

struct Score3 {
    double p = 0.0, r = 0.0, f = 0.0;
};

inline double fmeasure(double p, double r) { return (p + r > 0) ? 2 * p * r / (p + r) : 0.0; }
inline double fmeasure_perl(double p, double r) {
    double d = (1 - 0.5) * p + 0.5 * r;
    return d > 0 ? p * r / d : 0.0;
}

inline int popcount64(u64 x) { return __builtin_popcountll(x); }

// ---------------------------------------------------------------------------------------------
// Bit-parallel LCS (Allison-Dix / Hyyro): the candidate's tokens get match masks (bit j of a
// token's mask is set where the candidate's token j is that token), and a row V of W 64-bit
// words holds one row of the LCS table as differences (a 0 bit where the length grows).

// The scratch of the bit-parallel LCS kernels.
struct LcsScratch {
    Stamped mask_of;           // a token of the candidate -> the index of its mask in masks
    std::vector<u64> masks;    // the match masks, W words each (keeps its size from call to call)
    std::vector<u64> row;      // lcs_length: the one row it rolls over the other text
    std::vector<u64> rows;     // lcs_indices_mark: rows 0..K, kept for the walk back
    std::vector<u32> ref_pos;  // lcs_indices_mark: the positions of ref whose token has a mask

    void ensure_vocab(size_t n) { mask_of.ensure(n); }
};

// Fill lcs.mask_of / lcs.masks with the match masks of c's tokens; returns the word count W.
inline size_t build_masks(const u32* c, size_t nc, LcsScratch& lcs) {
    size_t W = (nc + 63) / 64;
    lcs.mask_of.reset();
    u32 nm = 0;  // masks in use
    for (size_t j = 0; j < nc; ++j) {
        u32 t = c[j];
        u32 idx;
        if (!lcs.mask_of.has(t)) {
            lcs.mask_of.ref(t) = idx = nm++;
            size_t need = static_cast<size_t>(nm) * W;
            if (lcs.masks.size() < need) lcs.masks.resize(std::max(need, 2 * lcs.masks.size()));
            std::fill_n(lcs.masks.begin() + static_cast<long>(need - W), W, 0);  // the new token's mask
        } else {
            idx = lcs.mask_of.get(t);
        }
        lcs.masks[idx * W + j / 64] |= 1ULL << (j % 64);
    }
    return W;
}

// The one step of the bit-parallel LCS, for a token whose match mask is M: the next row
// V' = (V + (V & M)) | (V & ~M) over W words, the addition's carry passed from word to word.
// next may be prev (a row rolled in place).
inline void lcs_step(const u64* prev, const u64* M, u64* next, size_t W) {
    unsigned char carry = 0;
    for (size_t w = 0; w < W; ++w) {
        u64 v = prev[w], m = M[w];
        unsigned long long sum;
        carry = static_cast<unsigned char>(__builtin_uaddll_overflow(v, v & m, &sum) |
                                           __builtin_uaddll_overflow(sum, carry, &sum));
        next[w] = sum | (v & ~m);
    }
}

// Length of the LCS of a and b.
inline u32 lcs_length(const u32* a, size_t na, const u32* b, size_t nb, LcsScratch& lcs) {
    if (!na || !nb) return 0;
    if (na < nb) {
        std::swap(a, b);
        std::swap(na, nb);
    }
    size_t W = build_masks(b, nb, lcs);
    if (W == 1) {  // the row in a register
        u64 v = ~0ULL;
        for (size_t i = 0; i < na; ++i) {
            u32 t = a[i];
            if (lcs.mask_of.has(t)) lcs_step(&v, &lcs.masks[lcs.mask_of.get(t)], &v, 1);
        }
        u64 full = nb == 64 ? ~0ULL : ((1ULL << nb) - 1);
        return static_cast<u32>(nb - popcount64(v & full));
    }
    lcs.row.assign(W, ~0ULL);
    u64* V = lcs.row.data();
    for (size_t i = 0; i < na; ++i) {
        u32 t = a[i];
        if (lcs.mask_of.has(t)) lcs_step(V, &lcs.masks[lcs.mask_of.get(t) * W], V, W);
    }
    size_t ones = 0;
    for (size_t w = 0; w + 1 < W; ++w) ones += popcount64(V[w]);
    size_t rem = nb - (W - 1) * 64;
    u64 full = rem == 64 ? ~0ULL : ((1ULL << rem) - 1);
    ones += popcount64(V[W - 1] & full);
    return static_cast<u32>(nb - ones);
}

// Bit helpers over multi-word rows.
inline size_t prefix_popcount(const u64* r, size_t j) {  // bits [0, j)
    size_t full = j / 64, c = 0;
    for (size_t w = 0; w < full; ++w) c += popcount64(r[w]);
    size_t rem = j % 64;
    if (rem) c += popcount64(r[full] & ((1ULL << rem) - 1));
    return c;
}
inline long highest_bit_below(const u64* m, size_t j) {  // highest set bit < j, or -1
    if (j == 0) return -1;
    long w = static_cast<long>((j - 1) / 64);
    size_t rem = j - static_cast<size_t>(w) * 64;
    u64 x = m[w];
    if (rem < 64) x &= (1ULL << rem) - 1;
    while (true) {
        if (x) return w * 64 + 63 - __builtin_clzll(x);
        if (--w < 0) return -1;
        x = m[w];
    }
}

// Marks in flag[] the positions of ref that rouge-score's lcs_ind(ref, can) returns, where the
// masks of can's tokens are already in lcs (build_masks: W words each, can of length nc).
inline void lcs_indices_mark(const u32* ref, size_t nr, size_t nc, size_t W, LcsScratch& lcs, u8* flag) {
    lcs.ref_pos.clear();
    for (size_t i = 0; i < nr; ++i)
        if (lcs.mask_of.has(ref[i])) lcs.ref_pos.push_back(static_cast<u32>(i));
    size_t K = lcs.ref_pos.size();
    if (!K) return;
    lcs.rows.assign((K + 1) * W, ~0ULL);
    for (size_t k = 0; k < K; ++k)
        lcs_step(&lcs.rows[k * W], &lcs.masks[lcs.mask_of.get(ref[lcs.ref_pos[k]]) * W], &lcs.rows[(k + 1) * W], W);
    // bits beyond nc never reach the walk: it reads bits below j <= nc only
    size_t j = nc, k = K;
    while (k && j) {
        --k;
        const u64* M = &lcs.masks[lcs.mask_of.get(ref[lcs.ref_pos[k]]) * W];
        if ((M[(j - 1) / 64] >> ((j - 1) % 64)) & 1ULL) {
            flag[lcs.ref_pos[k]] = 1;
            --j;
        } else if (prefix_popcount(&lcs.rows[k * W], j) > prefix_popcount(&lcs.rows[(k + 1) * W], j)) {
            j = static_cast<size_t>(highest_bit_below(M, j - 1));
            flag[lcs.ref_pos[k]] = 1;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// n-gram ids, order by order: an n-gram of order k has the id of the pair (the id of its first
// k-1 tokens, its last token), numbered from 1 as the pairs first appear. The sequences of one
// example (both texts; or the hypothesis and its references) share the numbering of an order.
struct NgramIds {
    U64Counter of_pair;     // (id of order k-1, token) -> id of order k
    u32 last = 0;           // the last id given in this order
    std::vector<u32> next;  // step's output, swapped into its ids

    void new_order() {
        of_pair.clear();
        last = 0;
    }
    // ids: the ids of order k-1 of toks (one per start) -> those of order k
    void step(std::vector<u32>& ids, const std::vector<u32>& toks, int k) {
        if (ids.size() < 2) {
            ids.clear();
            return;
        }
        next.resize(ids.size() - 1);
        for (size_t i = 0; i + 1 < ids.size(); ++i) {
            u32& v = of_pair.at((static_cast<u64>(ids[i]) << 32) | toks[i + static_cast<size_t>(k) - 1]);
            if (!v) v = ++last;
            next[i] = v;
        }
        ids.swap(next);
    }
};

// The scratch of ROUGE-N for n > 1.
struct NgramScratch {
    NgramIds ids;
    std::vector<u32> ref, pred;  // the n-gram ids of each text
    U64Counter ref_count;        // n-gram id -> its count in the reference not yet matched
};

// The scratch of the skip-bigram kernels (skip_hits_any, skip_hits_gap).
struct SkipScratch {
    Stamped in_x;                   // the tokens of x
    Stamped shared_id;              // a token of both x and y -> its compact id 0..nv-1
    std::vector<u32> xs, ys;        // x and y in compact ids
    std::vector<u32> last;          // any gap: 1 + the last position of each id in xs, then in ys
    std::vector<u32> x_start, y_start, x_at, y_at;  // gap: the positions of each id (counting sort)

    void ensure_vocab(size_t n) {
        in_x.ensure(n);
        shared_id.ensure(n);
    }
    // Numbers the tokens of both x and y (in order of their first place in y); returns how many.
    u32 number_shared(const std::vector<u32>& x, const std::vector<u32>& y) {
        in_x.reset();
        for (u32 t : x) in_x.ref(t) = 1;
        shared_id.reset();
        u32 nv = 0;
        for (u32 t : y)
            if (in_x.has(t) && !shared_id.has(t)) shared_id.ref(t) = nv++;
        return nv;
    }
};

// powers[k] = k ** weight, computed once per weight (ROUGE-W).
struct WeightPowers {
    std::vector<double> powers;
    double weight = -1.0;

    const double* upto(size_t k, double w) {
        if (weight != w) {
            powers.clear();
            weight = w;
        }
        while (powers.size() <= k) powers.push_back(std::pow(static_cast<double>(powers.size()), w));
        return powers.data();
    }
};

// Scratch space of one thread: each member serves one kernel in the one role its name says.
struct Work {
    LcsScratch lcs;
    NgramScratch ngram;
    SkipScratch skip;
    Stamped ref_count;        // a token -> its count in the reference not yet matched
    Stamped pred_count;       // a token -> its count in the prediction not yet matched
    std::vector<u8> ref_hit;  // score_lsum, score_w: the reference positions on a (weighted) LCS
    WeightPowers weight_powers;

    void ensure_vocab(size_t n) {
        lcs.ensure_vocab(n);
        skip.ensure_vocab(n);
        ref_count.ensure(n);
        pred_count.ensure(n);
    }
};

// ROUGE-N: rouge-score's _score_ngrams on n-gram counts (n-grams as NgramIds).
inline Score3 score_n(const Doc& t, const Doc& p, int n, Work& wk) {
    u64 hits = 0;
    if (n == 1) {
        wk.ref_count.reset();
        for (u32 x : t.toks) ++wk.ref_count.ref(x);
        for (u32 x : p.toks) {
            if (wk.ref_count.has(x)) {
                u32& c = wk.ref_count.ref(x);
                if (c) {
                    --c;
                    ++hits;
                }
            }
        }
    } else {
        NgramScratch& ng = wk.ngram;
        ng.ref.assign(t.toks.begin(), t.toks.end());
        ng.pred.assign(p.toks.begin(), p.toks.end());
        for (int k = 2; k <= n; ++k) {
            ng.ids.new_order();
            ng.ids.step(ng.ref, t.toks, k);
            ng.ids.step(ng.pred, p.toks, k);
        }
        ng.ref_count.clear();
        for (u32 x : ng.ref) ++ng.ref_count.at(x);
        for (u32 x : ng.pred) {
            u32* c = ng.ref_count.find(x);
            if (c && *c) {
                --*c;
                ++hits;
            }
        }
    }
    long tc = std::max<long>(static_cast<long>(t.toks.size()) - n + 1, 0);
    long pc = std::max<long>(static_cast<long>(p.toks.size()) - n + 1, 0);
    Score3 s;
    s.p = static_cast<double>(hits) / static_cast<double>(std::max<long>(pc, 1));
    s.r = static_cast<double>(hits) / static_cast<double>(std::max<long>(tc, 1));
    s.f = fmeasure(s.p, s.r);
    return s;
}

inline Score3 score_l(const Doc& t, const Doc& p, Work& wk) {
    Score3 s;
    if (t.toks.empty() || p.toks.empty()) return s;
    double lcs = lcs_length(t.toks.data(), t.toks.size(), p.toks.data(), p.toks.size(), wk.lcs);
    s.p = lcs / static_cast<double>(p.toks.size());
    s.r = lcs / static_cast<double>(t.toks.size());
    s.f = fmeasure(s.p, s.r);
    return s;
}

// rouge-score's _summary_level_lcs (ROUGE-Lsum).
inline Score3 score_lsum(const Doc& t, const Doc& p, Work& wk) {
    Score3 s;
    size_t m = t.stoks.size(), n = p.stoks.size();
    if (!m || !n) return s;
    u64 hits = 0;
    if (t.nsent() == 1 && p.nsent() == 1) {
        hits = lcs_length(t.stoks.data(), m, p.stoks.data(), n, wk.lcs);
    } else {
        wk.ref_hit.assign(m, 0);
        for (size_t c = 0; c < p.nsent(); ++c) {
            const u32* cs = p.stoks.data() + p.sbeg[c];
            size_t nc = p.sbeg[c + 1] - p.sbeg[c];
            size_t W = build_masks(cs, nc, wk.lcs);
            for (size_t r = 0; r < t.nsent(); ++r) {
                size_t b = t.sbeg[r];
                lcs_indices_mark(t.stoks.data() + b, t.sbeg[r + 1] - b, nc, W, wk.lcs, wk.ref_hit.data() + b);
            }
        }
        wk.ref_count.reset();
        wk.pred_count.reset();
        for (u32 x : t.stoks) ++wk.ref_count.ref(x);
        for (u32 x : p.stoks) ++wk.pred_count.ref(x);
        for (size_t i = 0; i < m; ++i) {
            if (!wk.ref_hit[i]) continue;
            u32 tok = t.stoks[i];
            if (wk.pred_count.get(tok) > 0 && wk.ref_count.get(tok) > 0) {
                ++hits;
                --wk.pred_count.ref(tok);
                --wk.ref_count.ref(tok);
            }
        }
    }
    s.r = static_cast<double>(hits) / static_cast<double>(m);
    s.p = static_cast<double>(hits) / static_cast<double>(n);
    s.f = fmeasure(s.p, s.r);
    return s;
}

// ---------------------------------------------------------------------------------------------
// ROUGE-1.5.5 wlcs_inner + markLCS: marks in hit[] the model positions on the weighted LCS.
// The script keeps a table of scores c, run lengths l and moves b; here a row of c is rolled,
// l is kept only where it is not 0 (at matches, stamped with their row), and the moves are
// 2-bit codes (1 diagonal, 2 up, 3 left). Tables of up to max_table_cells cells (m * (n + 1);
// default WLCS_FULL = 2**30 cells, 256 MB of moves) keep every move; larger ones keep a row of
// c and l every K ~ sqrt(m) rows and recompute one block of moves at a time while walking back
// (memory O(n sqrt(m))), only for the columns the walk can still reach.
constexpr size_t WLCS_FULL = size_t(1) << 30;

struct WlcsScratch {
    // the rows in flight (the last one computed and the next two), rotated by wlcs_rows
    std::vector<double> score[3];    // c
    std::vector<u32> run_row[3];     // l where it is not 0: the row of the match that set it...
    std::vector<u32> run_len[3];     // ... and its value
    // the checkpoint rows 0, K, 2K, ... of the same three (tables over max_table_cells)
    std::vector<double> score_at_ckpt;
    std::vector<u32> run_row_at_ckpt, run_len_at_ckpt;
    std::vector<u64> moves;          // the 2-bit moves of the rows kept, (n >> 5) + 1 words a row
};

// One row i (1-based) of the table over peer[0..n): cp -> cc; (rp, vp) -> (rc, vc).
template <bool MOVES>
inline void wlcs_row(u32 tok, u32 i, const u32* peer, size_t n, const double* cp, const u32* rp, const u32* vp,
                     double* cc, u32* rc, u32* vc, u64* mv, const double* P) {
    cc[0] = 0.0;
    double left = 0.0;
    u64 acc = 0;
    for (size_t j = 1; j <= n; ++j) {
        u64 code;
        if (__builtin_expect(peer[j - 1] == tok, 0)) {
            u32 k = rp[j - 1] == i - 1 ? vp[j - 1] : 0;
            left = cp[j - 1] + P[k + 1] - P[k];
            rc[j] = i;
            vc[j] = k + 1;
            code = 1;
        } else {
            double up = cp[j];
            code = 3 - static_cast<u64>(up >= left);
            left = up >= left ? up : left;
        }
        cc[j] = left;
        if (MOVES) {
            acc |= code << (2 * (j & 31));
            if ((j & 31) == 31) {
                mv[j >> 5] = acc;
                acc = 0;
            }
        }
    }
    if (MOVES && (n & 31) != 31) mv[n >> 5] = acc;
}

// Rows i and i+1 in one sweep: row i+1 at column j needs row i at j-1 and j only, so the two
// rows' running maxima are independent chains the CPU overlaps. Same operations as wlcs_row.
template <bool MOVES>
inline void wlcs_row2(u32 ta, u32 tb, u32 i, const u32* peer, size_t n, const double* cp, const u32* rp,
                      const u32* vp, double* ca, u32* ra, u32* va, double* cb, u32* rb, u32* vb, u64* mva,
                      u64* mvb, const double* P) {
    ca[0] = 0.0;
    cb[0] = 0.0;
    double la = 0.0, lb = 0.0;
    u64 acca = 0, accb = 0;
    for (size_t j = 1; j <= n; ++j) {
        u32 t = peer[j - 1];
        u64 codea, codeb;
        if (__builtin_expect(t == ta, 0)) {
            u32 k = rp[j - 1] == i - 1 ? vp[j - 1] : 0;
            la = cp[j - 1] + P[k + 1] - P[k];
            ra[j] = i;
            va[j] = k + 1;
            codea = 1;
        } else {
            double up = cp[j];
            codea = 3 - static_cast<u64>(up >= la);
            la = up >= la ? up : la;
        }
        ca[j] = la;
        if (__builtin_expect(t == tb, 0)) {
            u32 k = ra[j - 1] == i ? va[j - 1] : 0;
            lb = ca[j - 1] + P[k + 1] - P[k];
            rb[j] = i + 1;
            vb[j] = k + 1;
            codeb = 1;
        } else {
            double up = ca[j];
            codeb = 3 - static_cast<u64>(up >= lb);
            lb = up >= lb ? up : lb;
        }
        cb[j] = lb;
        if (MOVES) {
            acca |= codea << (2 * (j & 31));
            accb |= codeb << (2 * (j & 31));
            if ((j & 31) == 31) {
                mva[j >> 5] = acca;
                mvb[j >> 5] = accb;
                acca = accb = 0;
            }
        }
    }
    if (MOVES && (n & 31) != 31) {
        mva[n >> 5] = acca;
        mvb[n >> 5] = accb;
    }
}

// Rows first..last (1-based) from the row before them in (c, r, v)[0] (left there at the end),
// using (c, r, v)[1] and [2] as scratch; moves of row q at moves + (q - first) * words.
template <bool MOVES>
inline void wlcs_rows(const u32* model, size_t first, size_t last, const u32* peer, size_t n, double** c, u32** r,
                      u32** v, u64* moves, size_t words, const double* P) {
    size_t q = first;
    for (; q + 1 <= last; q += 2) {
        wlcs_row2<MOVES>(model[q - 1], model[q], static_cast<u32>(q), peer, n, c[0], r[0], v[0], c[1], r[1], v[1],
                         c[2], r[2], v[2], MOVES ? moves + (q - first) * words : nullptr,
                         MOVES ? moves + (q + 1 - first) * words : nullptr, P);
        std::swap(c[0], c[2]);
        std::swap(r[0], r[2]);
        std::swap(v[0], v[2]);
    }
    if (q == last) {
        wlcs_row<MOVES>(model[q - 1], static_cast<u32>(q), peer, n, c[0], r[0], v[0], c[1], r[1], v[1],
                        MOVES ? moves + (q - first) * words : nullptr, P);
        std::swap(c[0], c[1]);
        std::swap(r[0], r[1]);
        std::swap(v[0], v[1]);
    }
}

inline u32 wlcs_move(const u64* row, size_t j) { return static_cast<u32>((row[j >> 5] >> (2 * (j & 31))) & 3); }

inline void wlcs_mark(const u32* model, size_t m, const u32* peer, size_t n, u8* hit, const double* P,
                      WlcsScratch& ws, size_t max_table_cells = WLCS_FULL) {
    if (!m || !n) return;
    size_t w1 = n + 1;
    size_t words = (n >> 5) + 1;  // 2-bit moves of columns 0..n
    const u32 NO_ROW = 0xFFFFFFFFu;
    ws.score[0].assign(w1, 0.0);
    ws.score[1].assign(w1, 0.0);
    ws.score[2].assign(w1, 0.0);
    ws.run_row[0].assign(w1, NO_ROW);
    ws.run_row[1].assign(w1, NO_ROW);
    ws.run_row[2].assign(w1, NO_ROW);
    ws.run_len[0].assign(w1, 0);
    ws.run_len[1].assign(w1, 0);
    ws.run_len[2].assign(w1, 0);
    double* c[3] = {ws.score[0].data(), ws.score[1].data(), ws.score[2].data()};
    u32* r[3] = {ws.run_row[0].data(), ws.run_row[1].data(), ws.run_row[2].data()};
    u32* v[3] = {ws.run_len[0].data(), ws.run_len[1].data(), ws.run_len[2].data()};
    auto walk = [&](size_t& i, size_t& j, size_t stop, size_t first_row) {
        while (i > stop && j) {
            u32 mv = wlcs_move(&ws.moves[(i - first_row) * words], j);
            if (mv == 1) {
                --i;
                --j;
                hit[i] = 1;
            } else if (mv == 2) {
                --i;
            } else {
                --j;
            }
        }
    };
    if (m * w1 <= max_table_cells) {
        ws.moves.assign(m * words, 0);
        wlcs_rows<true>(model, 1, m, peer, n, c, r, v, ws.moves.data(), words, P);
        size_t i = m, j = n;
        walk(i, j, 0, 1);
        return;
    }
    // checkpoints at rows 0, K, 2K, ... (K even: row pairs never straddle a checkpoint)
    size_t K = (static_cast<size_t>(std::sqrt(static_cast<double>(m))) + 2) & ~size_t(1);
    size_t nck = m / K + 1;
    ws.score_at_ckpt.assign(nck * w1, 0.0);
    ws.run_row_at_ckpt.assign(nck * w1, NO_ROW);
    ws.run_len_at_ckpt.assign(nck * w1, 0);
    for (size_t b = 0; b * K < m; ++b) {
        size_t first = b * K + 1, last = std::min(m, (b + 1) * K);
        wlcs_rows<false>(model, first, last, peer, n, c, r, v, nullptr, words, P);
        if (last % K == 0) {
            std::memcpy(&ws.score_at_ckpt[(last / K) * w1], c[0], w1 * sizeof(double));
            std::memcpy(&ws.run_row_at_ckpt[(last / K) * w1], r[0], w1 * sizeof(u32));
            std::memcpy(&ws.run_len_at_ckpt[(last / K) * w1], v[0], w1 * sizeof(u32));
        }
    }
    ws.moves.assign(K * words, 0);
    size_t i = m, j = n;
    while (i && j) {
        size_t s = ((i - 1) / K) * K;  // block rows s+1 .. i
        std::memcpy(c[0], &ws.score_at_ckpt[(s / K) * w1], w1 * sizeof(double));
        std::memcpy(r[0], &ws.run_row_at_ckpt[(s / K) * w1], w1 * sizeof(u32));
        std::memcpy(v[0], &ws.run_len_at_ckpt[(s / K) * w1], w1 * sizeof(u32));
        // the walk only moves up and left: columns beyond j are never read again
        wlcs_rows<true>(model, s + 1, i, peer, j, c, r, v, ws.moves.data(), words, P);
        walk(i, j, s, s + 1);
    }
}

// ROUGE-1.5.5 computeWLCSScore for one model (reference), sentence units as the script's.
inline Score3 score_w(const Doc& t, const Doc& p, double w, Work& wk, WlcsScratch& ws) {
    size_t longest = 1;
    for (size_t k = 0; k < t.nsent(); ++k) longest = std::max<size_t>(longest, t.sbeg[k + 1] - t.sbeg[k]);
    for (size_t k = 0; k < p.nsent(); ++k) longest = std::max<size_t>(longest, p.sbeg[k + 1] - p.sbeg[k]);
    const double* P = wk.weight_powers.upto(longest + 1, w);
    wk.ref_count.reset();
    wk.pred_count.reset();
    for (u32 x : t.stoks) ++wk.ref_count.ref(x);
    for (u32 x : p.stoks) ++wk.pred_count.ref(x);
    double n_peer = static_cast<double>(p.stoks.size());
    double hit = 0.0, base = 0.0;
    for (size_t r = 0; r < t.nsent(); ++r) {
        const u32* ms = t.stoks.data() + t.sbeg[r];
        size_t size = t.sbeg[r + 1] - t.sbeg[r];
        wk.ref_hit.assign(size, 0);
        base += P[size];
        for (size_t c = 0; c < p.nsent(); ++c)
            wlcs_mark(ms, size, p.stoks.data() + p.sbeg[c], p.sbeg[c + 1] - p.sbeg[c], wk.ref_hit.data(), P, ws);
        u32 run = 0;
        for (size_t j = 0; j < size; ++j) {
            if (wk.ref_hit[j] != 1) continue;
            u32 tok = ms[j];
            if (wk.ref_count.get(tok) > 0 && wk.pred_count.get(tok) > 0) {
                ++run;
                if (j + 1 < size && wk.ref_hit[j + 1] == 0) {
                    hit += P[run];
                    run = 0;
                } else if (j + 1 == size) {
                    hit += P[run];
                    run = 0;
                }
                --wk.ref_count.ref(tok);
                --wk.pred_count.ref(tok);
            }
        }
    }
    double count = std::pow(base, w);
    double count_p = std::pow(n_peer, w);
    double inv = 1 / w;
    Score3 s;
    s.r = count != 0 ? std::pow(hit / count, inv) : 0.0;
    s.p = count_p != 0 ? std::pow(hit / count_p, inv) : 0.0;
    s.f = fmeasure_perl(s.p, s.r);
    return s;
}

// ---------------------------------------------------------------------------------------------
// ROUGE-1.5.5 computeSkipBigramScore. gap < 0: any gap. With unigrams (SU), every token but the
// last also counts as a unigram unit.
inline u64 skip_total(size_t n, long gap) {
    if (n < 2) return 0;
    if (gap < 0) return static_cast<u64>(n) * (n - 1) / 2;
    u64 tot = 0;
    for (size_t i = 0; i + 1 < n; ++i) tot += std::min<u64>(n - 1 - i, static_cast<u64>(gap) + 1);
    return tot;
}

// Clipped skip-bigram matches with any gap, without listing the O(n^2) pairs: for each token b
// of the shared vocabulary, one right-to-left sweep per text counts every (a, b) pair at once.
inline u64 skip_hits_any(const std::vector<u32>& x, const std::vector<u32>& y, SkipScratch& sk) {
    u32 nv = sk.number_shared(x, y);
    if (!nv) return 0;
    sk.xs.clear();
    sk.ys.clear();
    for (u32 t : x)
        if (sk.shared_id.has(t)) sk.xs.push_back(sk.shared_id.get(t));
    for (u32 t : y)
        if (sk.shared_id.has(t)) sk.ys.push_back(sk.shared_id.get(t));
    sk.last.assign(2 * static_cast<size_t>(nv), 0);
    for (size_t i = 0; i < sk.xs.size(); ++i) sk.last[sk.xs[i]] = static_cast<u32>(i + 1);
    for (size_t i = 0; i < sk.ys.size(); ++i) sk.last[nv + sk.ys[i]] = static_cast<u32>(i + 1);
    std::vector<u64> colx(nv), coly(nv);
    u64 hits = 0;
    for (u32 b = 0; b < nv; ++b) {
        std::fill(colx.begin(), colx.end(), 0);
        std::fill(coly.begin(), coly.end(), 0);
        u64 after = 0;
        for (long i = static_cast<long>(sk.last[b]) - 1; i >= 0; --i) {
            u32 t = sk.xs[static_cast<size_t>(i)];
            colx[t] += after;
            if (t == b) ++after;
        }
        after = 0;
        for (long i = static_cast<long>(sk.last[nv + b]) - 1; i >= 0; --i) {
            u32 t = sk.ys[static_cast<size_t>(i)];
            coly[t] += after;
            if (t == b) ++after;
        }
        for (u32 a = 0; a < nv; ++a) hits += std::min(colx[a], coly[a]);
    }
    return hits;
}

// Clipped skip-bigram matches with at most `gap` tokens between, in O(n * gap) without hashing
// pairs: the pairs are grouped by their first token (positions bucketed by token), and for each
// first token the counts of the second tokens live in a small stamped array.
inline u64 skip_hits_gap(const std::vector<u32>& x, const std::vector<u32>& y, long gap, SkipScratch& sk) {
    // other tokens than the shared ones can start or end no matching pair: NONE
    u32 nv = sk.number_shared(x, y);
    if (!nv) return 0;
    const u32 NONE = 0xFFFFFFFFu;
    sk.xs.resize(x.size());
    sk.ys.resize(y.size());
    for (size_t i = 0; i < x.size(); ++i) sk.xs[i] = sk.shared_id.has(x[i]) ? sk.shared_id.get(x[i]) : NONE;
    for (size_t i = 0; i < y.size(); ++i) sk.ys[i] = sk.shared_id.has(y[i]) ? sk.shared_id.get(y[i]) : NONE;
    // the positions of each compact id: id a at at[start[a] .. start[a + 1])
    auto bucket = [nv](const std::vector<u32>& k, std::vector<u32>& start, std::vector<u32>& at) {
        start.assign(static_cast<size_t>(nv) + 1, 0);
        for (u32 t : k)
            if (t != NONE) ++start[t + 1];
        for (u32 v = 0; v < nv; ++v) start[v + 1] += start[v];
        at.resize(start[nv]);
        std::vector<u32> fill(start.begin(), start.end() - 1);
        for (size_t i = 0; i < k.size(); ++i)
            if (k[i] != NONE) at[fill[k[i]]++] = static_cast<u32>(i);
    };
    bucket(sk.xs, sk.x_start, sk.x_at);
    bucket(sk.ys, sk.y_start, sk.y_at);
    std::vector<u32> cnt(nv, 0), stamp(nv, 0);
    u32 now = 0;
    u64 hits = 0;
    size_t span = static_cast<size_t>(gap) + 2;
    for (u32 a = 0; a < nv; ++a) {
        ++now;
        for (u32 q = sk.x_start[a]; q < sk.x_start[a + 1]; ++q) {
            size_t i = sk.x_at[q], end = std::min(x.size(), i + span);
            for (size_t j = i + 1; j < end; ++j) {
                u32 b = sk.xs[j];
                if (b == NONE) continue;
                if (stamp[b] != now) {
                    stamp[b] = now;
                    cnt[b] = 0;
                }
                ++cnt[b];
            }
        }
        for (u32 q = sk.y_start[a]; q < sk.y_start[a + 1]; ++q) {
            size_t i = sk.y_at[q], end = std::min(y.size(), i + span);
            for (size_t j = i + 1; j < end; ++j) {
                u32 b = sk.ys[j];
                if (b == NONE || stamp[b] != now || !cnt[b]) continue;
                --cnt[b];
                ++hits;
            }
        }
    }
    return hits;
}

inline Score3 score_s(const Doc& t, const Doc& p, long gap, bool unigrams, Work& wk) {
    const std::vector<u32>& x = t.toks;
    const std::vector<u32>& y = p.toks;
    u64 hits = gap < 0 ? skip_hits_any(x, y, wk.skip) : skip_hits_gap(x, y, gap, wk.skip);
    u64 tx = skip_total(x.size(), gap), ty = skip_total(y.size(), gap);
    if (unigrams) {
        if (x.size() > 1) tx += x.size() - 1;
        if (y.size() > 1) ty += y.size() - 1;
        if (x.size() > 1 && y.size() > 1) {
            wk.ref_count.reset();
            for (size_t i = 0; i + 1 < x.size(); ++i) ++wk.ref_count.ref(x[i]);
            for (size_t i = 0; i + 1 < y.size(); ++i) {
                if (!wk.ref_count.has(y[i])) continue;
                u32& c = wk.ref_count.ref(y[i]);
                if (c) {
                    --c;
                    ++hits;
                }
            }
        }
    }
    Score3 s;
    s.r = tx ? static_cast<double>(hits) / static_cast<double>(tx) : 0.0;
    s.p = ty ? static_cast<double>(hits) / static_cast<double>(ty) : 0.0;
    s.f = fmeasure_perl(s.p, s.r);
    return s;
}

// ---------------------------------------------------------------------------------------------
// The kinds of ROUGE the scorer computes: Python reads them as _core.RougeKind (no other table
// of codes exists).
enum class RougeKind : int { N = 0, L = 1, LSUM = 2, W = 3, S = 4, SU = 5 };

// false for a value outside the enumeration (RougeKind(99) can be made from Python)
inline bool is_known(RougeKind k) {
    switch (k) {
        case RougeKind::N:
        case RougeKind::L:
        case RougeKind::LSUM:
        case RougeKind::W:
        case RougeKind::S:
        case RougeKind::SU: return true;
    }
    return false;
}

struct RougeType {
    RougeKind kind;
    long param;  // n for N; the gap for S / SU (-1: any)
};

inline Score3 score_type(const RougeType& ty, const Doc& t, const Doc& p, double w, Work& wk,
                         WlcsScratch& ws) {
    switch (ty.kind) {
        case RougeKind::N: return score_n(t, p, static_cast<int>(ty.param), wk);
        case RougeKind::L: return score_l(t, p, wk);
        case RougeKind::LSUM: return score_lsum(t, p, wk);
        case RougeKind::W: return score_w(t, p, w, wk, ws);
        case RougeKind::S: return score_s(t, p, ty.param, false, wk);
        case RougeKind::SU: return score_s(t, p, ty.param, true, wk);
    }
    // RougeCore checks every kind when it is made: reaching here is a bug
    throw std::logic_error("unknown ROUGE kind " + std::to_string(static_cast<int>(ty.kind)));
}

}  // namespace tgm
