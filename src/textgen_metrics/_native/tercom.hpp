// Translation edit rate with shifts: sacrebleu 2.x's Tercom algorithm (metrics/lib_ter.py), the
// same edits to the last one. Words are integer ids (one interner per batch); the kernel runs
// without the GIL.
//
// The algorithm is sacrebleu's: greedy shifts of hypothesis phrases (at most 10 words, at most 50
// positions away) chosen as Tercom ranks them (largest drop of the edit distance, then the longest
// phrase, the earliest start, the earliest target), until no shift helps or 1,000 candidate shifts
// have been tried; the edit distance is a beam search around the length-scaled diagonal (25 cells
// each side), with Tercom's preferences among equal-cost operations. What differs is how the same
// numbers are found:
//
// - A matrix row holds costs only; the operations of the one optimal path are recomputed from the
//   costs while tracing back (sacrebleu stores an (operation, cost) pair per cell).
// - A candidate shift whose edit distance cannot make it the best one is abandoned as soon as a
//   computed row proves it: every path to the last cell passes through each row, and costs only
//   grow along a path, so the smallest cost of a row (plus the length difference of what remains
//   of the two texts) bounds the final distance from below. A candidate can only matter if its
//   drop is positive and at least the best drop so far (on a tie the later tie-breakers decide),
//   so rows above `pre_score - max(best_drop, 1)` end its computation. Once the words from some
//   row on are those of the unshifted hypothesis, the rest of the matrix is a min-plus function
//   of the row, which bounds the distance by the unshifted one's less the largest amount by which
//   a cell is lower. Candidates are counted exactly as sacrebleu counts them, so its
//   1,000-candidate limit stops at the same shift.
// - Phrase pairs are found from each hypothesis word's positions in the reference, in sacrebleu's
//   order; the error sums over a phrase come from prefix sums.
// - Costs are 32-bit; INF (2^30) stands for sacrebleu's 10^16: every finite cost is below it, and
//   a cell is capped at it as sacrebleu caps, so every comparison comes out the same.
//
// Rows of hypothesis prefixes are cached in a trie of at most MAX_CACHE_SIZE nodes, as sacrebleu
// does (the same nodes, filled in the same order); a row depends only on the prefix (the beam
// depends on the hypothesis length, which shifts keep), so the cache changes no number. The
// Python version this was ported from, tests/tercom_reference.py, is held equal to this kernel by
// property tests, and both to sacrebleu on generated sentences.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common.hpp"

namespace tgm {

namespace tercom {

constexpr int MAX_SHIFT_SIZE = 10;
constexpr int MAX_SHIFT_DIST = 50;
constexpr int BEAM_WIDTH = 25;
constexpr u32 MAX_CACHE_SIZE = 10000;
constexpr int MAX_SHIFT_CANDIDATES = 1000;
using Cost = int32_t;
constexpr Cost INF = Cost(1) << 30;  // sacrebleu's _INT_INFINITY (10^16)
constexpr int64_t NO_EDITS = 10000000000000000LL;  // the fewest edits over no references (1e16)

enum Op : u8 { NOP = 0, SUB = 1, INS = 2, DEL = 3 };

// The trie of cached rows: (node, word) -> child node. Node 0 is the root (the empty prefix);
// emptied per sentence pair by a generation stamp.
class RowTrie {
  public:
    RowTrie() : slots_(1u << 15) {}  // above twice MAX_CACHE_SIZE + 1 nodes

    void clear() {
        if (++gen_ == 0) {
            std::fill(slots_.begin(), slots_.end(), Slot{});
            gen_ = 1;
        }
    }
    u32 find(u32 node, u32 word) const {
        size_t mask = slots_.size() - 1;
        for (size_t i = hash(node, word) & mask;; i = (i + 1) & mask) {
            const Slot& s = slots_[i];
            if (s.gen != gen_) return NONE;
            if (s.node == node && s.word == word) return s.child;
        }
    }
    void insert(u32 node, u32 word, u32 child) {
        size_t mask = slots_.size() - 1;
        size_t i = hash(node, word) & mask;
        while (slots_[i].gen == gen_) i = (i + 1) & mask;
        slots_[i] = {gen_, node, word, child};
    }
    static constexpr u32 NONE = 0xFFFFFFFFu;

  private:
    struct Slot {
        u32 gen = 0, node = 0, word = 0, child = 0;
    };
    static size_t hash(u32 node, u32 word) {
        u64 h = (static_cast<u64>(node) << 32 | word) * 0x9E3779B97F4A7C15ull;
        return static_cast<size_t>(h >> 40);
    }
    std::vector<Slot> slots_;
    u32 gen_ = 0;
};

// One thread's state: sentence pairs are scored one after the other, their buffers reused.
class Tercom {
  public:
    // `vocab`: ids are below it. Returns the (shifts + edit distance) of hyp against ref.
    int64_t edits(const u32* hyp, size_t n_hyp, const u32* ref, size_t n_ref, size_t vocab) {
        if (n_ref == 0) return static_cast<int64_t>(n_hyp);
        setup(hyp, n_hyp, ref, n_ref, vocab);
        words_.assign(hyp, hyp + n_hyp);
        int shifts = 0, checked = 0;
        while (true) {
            int delta = shift(checked);
            if (checked >= MAX_SHIFT_CANDIDATES || delta <= 0) break;
            ++shifts;
            words_.swap(best_words_);
        }
        bool done = false;
        Cost d = distance(words_.data(), INF, nullptr, 0, cand_rows_, cand_buf_.data(), done);
        return shifts + static_cast<int64_t>(d);
    }

  private:
    // ---- the beam edit distance (sacrebleu's BeamEditDistance) for one reference and one
    // hypothesis length
    void setup(const u32* hyp, size_t n_hyp, const u32* ref, size_t n_ref, size_t vocab) {
        ref_ = ref;
        m_ = static_cast<int>(n_ref);
        n_ = static_cast<int>(n_hyp);
        size_t width = static_cast<size_t>(m_) + 1;
        double ratio = n_ ? static_cast<double>(m_) / static_cast<double>(n_) : 1.0;
        int beam = BEAM_WIDTH < ratio / 2 ? static_cast<int>(std::ceil(ratio / 2 + BEAM_WIDTH)) : BEAM_WIDTH;
        lo_.assign(static_cast<size_t>(n_) + 1, 0);
        hi_.assign(static_cast<size_t>(n_) + 1, m_ + 1);
        for (int i = 1; i <= n_; ++i) {
            long pd = static_cast<long>(std::floor(i * ratio));
            lo_[i] = static_cast<int>(std::max(0L, pd - beam));
            hi_[i] = i == n_ ? m_ + 1 : static_cast<int>(std::min(static_cast<long>(m_) + 1, pd + beam));
        }
        // the cache: node k's row at arena_[k * width]; the root's is the first row (insertions)
        size_t need = (static_cast<size_t>(MAX_CACHE_SIZE) + 1) * width;
        if (need > arena_cap_) {
            arena_.reset(new Cost[need]);  // left uninitialised: pages are touched as rows are written
            arena_cap_ = need;
        }
        for (int j = 0; j <= m_; ++j) arena_[j] = j;
        trie_.clear();
        cache_size_ = 0;
        size_t cells = (static_cast<size_t>(n_) + 1) * width;
        if (base_buf_.size() < cells) base_buf_.resize(cells);
        if (cand_buf_.size() < cells) cand_buf_.resize(cells);
        base_rows_.assign(static_cast<size_t>(n_) + 1, nullptr);
        cand_rows_.assign(static_cast<size_t>(n_) + 1, nullptr);
        // each reference word's positions, in order: head_[w] the first, next_[j] the one after j
        if (head_.size() < vocab) {
            head_.assign(vocab, 0);
            stamp_.assign(vocab, 0);
        }
        if (++pair_ == 0) {
            std::fill(stamp_.begin(), stamp_.end(), 0);
            pair_ = 1;
        }
        next_.assign(static_cast<size_t>(m_), -1);
        for (int j = m_ - 1; j >= 0; --j) {
            u32 w = ref[j];
            next_[j] = stamp_[w] == pair_ ? head_[w] : -1;
            head_[w] = j;
            stamp_[w] = pair_;
        }
        (void)hyp;
    }

    Cost* row_of(u32 node) { return arena_.get() + static_cast<size_t>(node) * (static_cast<size_t>(m_) + 1); }

    // row i (hypothesis word w) from row i - 1, the whole row (INF outside the beam)
    void compute_row(int i, const Cost* prev, u32 w, Cost* cur) const {
        int lo = lo_[i], hi = hi_[i];
        Cost left;
        int j = lo;
        if (lo == 0) {
            left = prev[0] + 1;  // sacrebleu: a deletion, whatever it costs
            cur[0] = left;
            j = 1;
        } else {
            left = INF;
            std::fill(cur, cur + lo, INF);
        }
        const u32* ref = ref_;
        for (; j < hi; ++j) {
            Cost diag = prev[j - 1], up = prev[j];
            Cost c = ref[j - 1] == w ? diag : diag + 1;
            if (up < c) c = up + 1 < c ? up + 1 : c;
            if (left + 1 < c) c = left + 1;
            if (c > INF) c = INF;
            cur[j] = c;
            left = c;
        }
        if (hi <= m_) std::fill(cur + hi, cur + m_ + 1, INF);
    }

    // whether row i proves the distance above `bound`: by a lower bound (a cell's cost plus the
    // length difference of what remains of the two texts), or, once the words from `tail` on
    // are those of the hypothesis whose rows are `base`, because the distance cannot fall below
    // base's by more than the largest amount by which a cell of this row is lower than base's
    bool hopeless(int i, const Cost* row, int64_t bound, const Cost* const* base, int tail) const {
        int lo = lo_[i], hi = hi_[i];
        int64_t k = static_cast<int64_t>(m_) - n_ + i;
        int64_t low = INT64_MAX;
        for (int j = lo; j < hi; ++j) {
            int64_t d = j - k;
            int64_t v = static_cast<int64_t>(row[j]) + (d < 0 ? -d : d);
            if (v < low) low = v;
        }
        if (low > bound) return true;
        if (base == nullptr || i < tail || i == 0) return false;
        const Cost* b = base[i];
        int64_t gain = INT64_MIN;
        for (int j = lo; j < hi; ++j) {
            int64_t g = static_cast<int64_t>(b[j]) - row[j];
            if (g > gain) gain = g;
        }
        return static_cast<int64_t>(base[n_][m_]) - gain > bound;
    }

    // the edit distance of words (n_ of them), its rows in `rows` (cached ones in the arena, the
    // others in `scratch`), done = true; or a number above `bound` (done = false) when a row
    // shows that the distance exceeds it
    Cost distance(const u32* words, int64_t bound, const Cost* const* base, int tail,
                  std::vector<const Cost*>& rows, Cost* scratch, bool& done) {
        size_t width = static_cast<size_t>(m_) + 1;
        rows[0] = arena_.get();
        u32 node = 0;
        int start = 0;
        while (start < n_) {
            u32 c = trie_.find(node, words[start]);
            if (c == RowTrie::NONE) break;
            node = c;
            ++start;
            rows[start] = row_of(c);
        }
        done = false;
        if (start && hopeless(start, rows[start], bound, base, tail)) return static_cast<Cost>(bound + 1);
        bool add = cache_size_ < MAX_CACHE_SIZE;
        for (int i = start + 1; i <= n_; ++i) {
            u32 w = words[i - 1];
            Cost* row;
            if (add) {
                u32 c = ++cache_size_;
                trie_.insert(node, w, c);
                node = c;
                row = row_of(c);
                add = cache_size_ < MAX_CACHE_SIZE;
            } else {
                row = scratch + static_cast<size_t>(i) * width;
            }
            compute_row(i, rows[i - 1], w, row);
            rows[i] = row;
            if (hopeless(i, row, bound, base, tail)) return static_cast<Cost>(bound + 1);
        }
        done = true;
        return rows[n_][m_];
    }

    // sacrebleu's trace, recomputed from the costs: at each cell, the first of
    // substitution/match, deletion, insertion that gives the cell's cost
    void trace(const u32* words, const std::vector<const Cost*>& rows) {
        ops_.clear();
        int i = n_, j = m_;
        while (i > 0 || j > 0) {
            int op;
            if (i == 0) {
                op = INS;
            } else if (j == 0) {
                op = DEL;
            } else {
                const Cost* prev = rows[i - 1];
                const Cost* cur = rows[i];
                bool same = words[i - 1] == ref_[j - 1];
                int64_t best = INF;
                op = -1;
                int64_t d = static_cast<int64_t>(prev[j - 1]) + (same ? 0 : 1);
                if (best > d) {
                    best = d;
                    op = same ? NOP : SUB;
                }
                if (best > static_cast<int64_t>(prev[j]) + 1) {
                    best = static_cast<int64_t>(prev[j]) + 1;
                    op = DEL;
                }
                if (best > static_cast<int64_t>(cur[j - 1]) + 1) op = INS;
                if (op < 0) throw std::runtime_error("TER: no path within the beam");  // sacrebleu raises too
            }
            ops_.push_back(static_cast<u8>(op));
            if (op == NOP || op == SUB) {
                --i;
                --j;
            } else if (op == INS) {
                --j;
            } else {
                --i;
            }
        }
        std::reverse(ops_.begin(), ops_.end());
    }

    // sacrebleu's trace_to_alignment of the flipped trace (insertions and deletions swapped):
    // align_[reference position] = hypothesis position, and the prefix sums of the errors
    void alignment() {
        int pos_hyp = -1, pos_ref = -1;
        align_.assign(static_cast<size_t>(m_), -1);
        hyp_sum_.assign(1, 0);
        ref_sum_.assign(1, 0);
        for (u8 op : ops_) {
            if (op == NOP || op == SUB) {
                ++pos_hyp;
                ++pos_ref;
                align_[pos_ref] = pos_hyp;
                int e = op == NOP ? 0 : 1;
                hyp_sum_.push_back(hyp_sum_.back() + e);
                ref_sum_.push_back(ref_sum_.back() + e);
            } else if (op == DEL) {  // flipped: an insertion
                ++pos_hyp;
                hyp_sum_.push_back(hyp_sum_.back() + 1);
            } else {  // an insertion, flipped: a deletion
                ++pos_ref;
                align_[pos_ref] = pos_hyp;
                ref_sum_.push_back(ref_sum_.back() + 1);
            }
        }
    }

    // sacrebleu's _perform_shift of words_ into out (Python's slices, clamped)
    void perform_shift(int start, int length, int target, std::vector<u32>& out) const {
        const u32* w = words_.data();
        out.clear();
        auto put = [&](int a, int b) {
            a = std::min(a, n_);
            b = std::min(b, n_);
            if (b > a) out.insert(out.end(), w + a, w + b);
        };
        if (target < start) {
            put(0, target);
            put(start, start + length);
            put(target, start);
            put(start + length, n_);
        } else if (target > start + length) {
            put(0, start);
            put(start + length, target);
            put(start, start + length);
            put(target, n_);
        } else {
            put(0, start);
            put(start + length, length + target);
            put(start, start + length);
            put(length + target, n_);
        }
    }

    // sacrebleu's _shift of words_: the best shift's drop (its words in best_words_), 0 when
    // none helps; `checked` counts the candidates
    int shift(int& checked) {
        bool done = false;
        Cost pre_score = distance(words_.data(), INF, nullptr, 0, base_rows_, base_buf_.data(), done);
        if (!done) throw std::logic_error("TER: the edit distance has no bound");
        trace(words_.data(), base_rows_);
        alignment();
        const u32* h = words_.data();
        const u32* r = ref_;
        int n_h = n_, n_r = m_;
        bool have = false;
        int best_drop = 0, best_len = 0, best_start = 0, best_idx = 0;  // the key (drop, len, -start, -idx)
        for (int start_h = 0; start_h < n_h; ++start_h) {
            u32 wh = h[start_h];
            int start_r = stamp_[wh] == pair_ ? head_[wh] : -1;
            for (; start_r >= 0; start_r = next_[start_r]) {
                if (std::abs(start_r - start_h) > MAX_SHIFT_DIST) continue;
                int length = 0;
                while (length < MAX_SHIFT_SIZE && h[start_h + length] == r[start_r + length]) {
                    ++length;
                    // the phrase h[start_h, start_h + length) == r[start_r, start_r + length)
                    if (hyp_sum_[start_h + length] - hyp_sum_[start_h] &&
                        ref_sum_[start_r + length] - ref_sum_[start_r] &&
                        !(start_h <= align_[start_r] && align_[start_r] < start_h + length)) {
                        int prev_idx = -1;
                        for (int offset = -1; offset < length; ++offset) {
                            int idx = start_r + offset == -1 ? 0 : align_[start_r + offset] + 1;
                            if (idx == prev_idx) continue;
                            prev_idx = idx;
                            ++checked;
                            perform_shift(start_h, length, idx, shifted_);
                            int need = have ? std::max(best_drop, 1) : 1;
                            int64_t bound = static_cast<int64_t>(pre_score) - need;
                            // from `tail` on, the shifted words are words_'s
                            int tail = idx < start_h ? start_h + length : idx > start_h + length ? idx : length + idx;
                            Cost score = distance(shifted_.data(), bound, base_rows_.data(), tail, cand_rows_,
                                                  cand_buf_.data(), done);
                            if (score > bound) continue;  // its drop is below the best one: sacrebleu drops it too
                            int drop = pre_score - score;
                            bool better = !have;
                            if (!better) {
                                if (drop != best_drop) better = drop > best_drop;
                                else if (length != best_len) better = length > best_len;
                                else if (start_h != best_start) better = start_h < best_start;
                                else better = idx < best_idx;
                            }
                            if (better) {
                                have = true;
                                best_drop = drop;
                                best_len = length;
                                best_start = start_h;
                                best_idx = idx;
                                best_words_.swap(shifted_);
                            }
                        }
                        if (checked >= MAX_SHIFT_CANDIDATES) return have ? best_drop : 0;  // after this phrase
                    }
                    if (n_h == start_h + length || n_r == start_r + length) break;
                }
            }
        }
        return have ? best_drop : 0;
    }

    const u32* ref_ = nullptr;
    int m_ = 0, n_ = 0;
    std::vector<int> lo_, hi_;
    std::unique_ptr<Cost[]> arena_;
    size_t arena_cap_ = 0;
    RowTrie trie_;
    u32 cache_size_ = 0;
    std::vector<Cost> base_buf_, cand_buf_;
    std::vector<const Cost*> base_rows_, cand_rows_;
    std::vector<int> head_, next_;
    std::vector<u32> stamp_;
    u32 pair_ = 0;
    std::vector<u8> ops_;
    std::vector<int> align_, hyp_sum_, ref_sum_;
    std::vector<u32> words_, shifted_, best_words_;
};

}  // namespace tercom

}  // namespace tgm
