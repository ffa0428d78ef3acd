// sacrebleu's 13a tokenizer (mteval-v13a), whitespace splitting as str.split(), and the n-gram
// statistics of BLEU (sacrebleu corpus_bleu / nltk sentence_bleu: clipped matches per order,
// closest reference length) and Google BLEU (nltk corpus_gleu: best matches and total per
// example).
#pragma once

#include "common.hpp"
#include "rouge.hpp"

namespace tgm {

// str.isspace() of the code point that starts at s[i]; i moves past it.
inline bool next_is_space(std::string_view s, size_t& i) {
    u8 c = static_cast<u8>(s[i]);
    if (c < 0x80) {
        ++i;
        return Py_UNICODE_ISSPACE(c);
    }
    return py_isspace(decode_utf8(s.data(), s.size(), i));
}

// str.split(): tokens of s separated by runs of Unicode whitespace (byte spans).
inline void split_ws(std::string_view s, std::vector<std::string_view>& out) {
    size_t i = 0, n = s.size();
    size_t start = std::string::npos;
    while (i < n) {
        size_t at = i;
        bool space = next_is_space(s, i);
        if (space) {
            if (start != std::string::npos) {
                out.push_back(s.substr(start, at - start));
                start = std::string::npos;
            }
        } else if (start == std::string::npos) {
            start = at;
        }
    }
    if (start != std::string::npos) out.push_back(s.substr(start));
}

// str.rstrip(): s without trailing Unicode whitespace.
inline std::string_view rstrip_ws(std::string_view s) {
    size_t i = 0, n = s.size(), keep = 0;
    while (i < n) {
        bool space = next_is_space(s, i);
        if (!space) keep = i;
    }
    return s.substr(0, keep);
}

inline void replace_all(std::string& s, std::string_view from, std::string_view to) {
    if (s.find(from) == std::string::npos) return;
    std::string out;
    out.reserve(s.size());
    size_t at = 0;
    while (true) {
        size_t k = s.find(from, at);
        if (k == std::string::npos) break;
        out.append(s, at, k - at);
        out.append(to);
        at = k + from.size();
    }
    out.append(s, at, std::string::npos);
    s.swap(out);
}

// One regex rule of the form "(A)(B)" -> "<pre>A<mid>B<post>" with single-character classes,
// applied as re.sub does (leftmost, non-overlapping). Exact on UTF-8 bytes: B is always ASCII,
// and A's class either is ASCII or matches every non-digit, so a multi-byte character can only
// take part through its last byte, where the inserted spaces land in the same place.
template <class A, class B>
inline void sub_pairs(std::string& s, A a, B b, const char* pre, const char* mid, const char* post) {
    std::string out;
    out.reserve(s.size() + 16);
    size_t i = 0, n = s.size();
    bool changed = false;
    while (i < n) {
        if (i + 1 < n && a(static_cast<u8>(s[i])) && b(static_cast<u8>(s[i + 1]))) {
            out += pre;
            out.push_back(s[i]);
            out += mid;
            out.push_back(s[i + 1]);
            out += post;
            i += 2;
            changed = true;
        } else {
            out.push_back(s[i]);
            ++i;
        }
    }
    if (changed) s.swap(out);
}

// sacrebleu 2.x Tokenizer13a on text.rstrip() (as sacrebleu's BLEU calls it), lower-cased first
// when asked: the tokens as byte spans into buf.
inline void tokenize_13a(std::string_view text, bool lowercase, std::string& buf, std::vector<std::string_view>& out) {
    static bool pad[128];
    static bool init = false;
    if (!init) {
        // r"([\{-\~\[-\` -\&\(-\+\:-\@\/])" -> r" \1 "
        const char* cls = "{|}~[\\]^_` !\"#$%&()*+:;<=>?@/";
        for (const char* p = cls; *p; ++p) pad[static_cast<u8>(*p)] = true;
        init = true;
    }
    std::string line;
    if (lowercase) {
        py_lower(text, line);
        line = std::string(rstrip_ws(line));
    } else {
        line = std::string(rstrip_ws(text));
    }
    replace_all(line, "<skipped>", "");
    replace_all(line, "-\n", "");
    replace_all(line, "\n", " ");
    if (line.find('&') != std::string::npos) {
        replace_all(line, "&quot;", "\"");
        replace_all(line, "&amp;", "&");
        replace_all(line, "&lt;", "<");
        replace_all(line, "&gt;", ">");
    }
    buf.clear();
    buf.reserve(line.size() * 2 + 2);
    buf.push_back(' ');
    for (char c : line) {
        u8 u = static_cast<u8>(c);
        if (u < 128 && pad[u]) {
            buf.push_back(' ');
            buf.push_back(c);
            buf.push_back(' ');
        } else {
            buf.push_back(c);
        }
    }
    buf.push_back(' ');
    auto digit = [](u8 c) { return c >= '0' && c <= '9'; };
    auto nondigit = [](u8 c) { return !(c >= '0' && c <= '9'); };
    auto dotcomma = [](u8 c) { return c == '.' || c == ','; };
    auto dash = [](u8 c) { return c == '-'; };
    if (buf.find_first_of(".,") != std::string::npos) {
        sub_pairs(buf, nondigit, dotcomma, "", " ", " ");  // ([^0-9])([\.,]) -> \1 \2
        sub_pairs(buf, dotcomma, nondigit, " ", " ", "");  // ([\.,])([^0-9]) -> " \1 \2"
    }
    if (buf.find('-') != std::string::npos) sub_pairs(buf, digit, dash, "", " ", " ");  // ([0-9])(-) -> \1 \2
    out.clear();
    split_ws(buf, out);
}

// ---------------------------------------------------------------------------------------------
// n-gram statistics over token ids of one example (hypothesis + references).
struct NgramWork {
    NgramIds ngram_ids;
    U64Counter hyp, ref, best;          // per n-gram id: its count in the hypothesis, in one
                                        // reference, the best (clipped) count over the references
    std::vector<std::vector<u32>> ids;  // per sequence: ids of the current order
};

// BLEU: correct[k-1], total[k-1] for k = 1..max_order (clipped by the maximum count over the
// references), and the closest reference length (the shorter one on ties).
inline void bleu_stats(const std::vector<u32>& hyp, const std::vector<std::vector<u32>>& refs, int max_order,
                       NgramWork& w, u64* correct, u64* total, u64& ref_len) {
    size_t nr = refs.size();
    w.ids.resize(nr + 1);
    w.ids[0].assign(hyp.begin(), hyp.end());
    for (size_t r = 0; r < nr; ++r) w.ids[r + 1].assign(refs[r].begin(), refs[r].end());
    for (int k = 1; k <= max_order; ++k) {
        if (k > 1) {
            w.ngram_ids.new_order();
            w.ngram_ids.step(w.ids[0], hyp, k);
            for (size_t r = 0; r < nr; ++r) w.ngram_ids.step(w.ids[r + 1], refs[r], k);
        }
        w.hyp.clear();
        for (u32 g : w.ids[0]) ++w.hyp.at(g);
        w.best.clear();
        for (size_t r = 0; r < nr; ++r) {
            w.ref.clear();
            for (u32 g : w.ids[r + 1])
                if (w.hyp.find(g)) ++w.ref.at(g);
            for (u32 g : w.ids[r + 1]) {
                u32* c = w.ref.find(g);
                if (!c) continue;
                u32& b = w.best.at(g);
                if (*c > b) b = *c;
            }
        }
        u64 corr = 0;
        for (u32 g : w.ids[0]) {
            // each hypothesis occurrence takes one unit of the clipped budget
            u32* b = w.best.find(g);
            if (b && *b) {
                --*b;
                ++corr;
            }
        }
        correct[k - 1] = corr;
        total[k - 1] = w.ids[0].size();
    }
    u64 hl = hyp.size();
    bool have = false;
    u64 best_len = 0, best_diff = 0;
    for (auto& r : refs) {
        u64 rl = r.size();
        u64 diff = rl > hl ? rl - hl : hl - rl;
        if (!have || diff < best_diff || (diff == best_diff && rl < best_len)) {
            best_len = rl;
            best_diff = diff;
            have = true;
        }
    }
    ref_len = best_len;
}

// nltk corpus_gleu's best (matches, total) of one example over its references; total 0: none.
inline void gleu_stats(const std::vector<u32>& hyp, const std::vector<std::vector<u32>>& refs, int min_len,
                       int max_len, NgramWork& w, u64& best_tp, u64& best_all) {
    size_t nr = refs.size();
    w.ids.resize(nr + 1);
    w.ids[0].assign(hyp.begin(), hyp.end());
    for (size_t r = 0; r < nr; ++r) w.ids[r + 1].assign(refs[r].begin(), refs[r].end());
    std::vector<u64> tp(nr, 0), tpfn(nr, 0);
    u64 tpfp = 0;
    for (int k = 1; k <= max_len; ++k) {
        if (k > 1) {
            w.ngram_ids.new_order();
            w.ngram_ids.step(w.ids[0], hyp, k);
            for (size_t r = 0; r < nr; ++r) w.ngram_ids.step(w.ids[r + 1], refs[r], k);
        }
        if (k < min_len) continue;
        tpfp += w.ids[0].size();
        for (size_t r = 0; r < nr; ++r) {
            tpfn[r] += w.ids[r + 1].size();
            w.hyp.clear();
            for (u32 g : w.ids[0]) ++w.hyp.at(g);
            u64 m = 0;
            for (u32 g : w.ids[r + 1]) {
                u32* c = w.hyp.find(g);
                if (c && *c) {
                    --*c;
                    ++m;
                }
            }
            tp[r] += m;
        }
    }
    best_tp = 0;
    best_all = 0;
    for (size_t r = 0; r < nr; ++r) {
        u64 n_all = std::max(tpfp, tpfn[r]);
        if (n_all > 0 && (best_all == 0 || static_cast<double>(tp[r]) / static_cast<double>(n_all) >
                                               static_cast<double>(best_tp) / static_cast<double>(best_all))) {
            best_tp = tp[r];
            best_all = n_all;
        }
    }
}

}  // namespace tgm
