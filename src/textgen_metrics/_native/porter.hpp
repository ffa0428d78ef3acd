// nltk's PorterStemmer in its default NLTK_EXTENSIONS mode (the mode rouge-score and nltk's
// METEOR use), rule for rule: nltk/stem/porter.py of nltk 3.10, including its quirks (the
// length test on the word before lower-casing, the literal "*d" suffix of step 1b, the "alli"
// recursion and the "logi" condition of step 2). Words are sequences of code points; only ASCII
// letters take part in the rules, every other code point is a consonant, as in Python.
//
// Built for a batch's new words, each stemmed once (a batch of 1,000 pairs brings about 9,000):
// the word is rewritten in its caller's buffer (nltk builds a new string per rule), a rule list
// only tries the rules ending in the word's last letter, and a suffix test is one compare of the
// word's last eight letters, packed in a u64, with the suffix's letters packed at compile time.
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common.hpp"

namespace tgm {

template <class C>  // char (UTF-8 bytes of an ASCII word) or char32_t (code points)
class Porter {
    static constexpr u8 clen(const char* s) {
        u8 n = 0;
        while (s[n]) ++n;
        return n;
    }
    // "ing" -> 'g' | 'n' << 8 | 'i' << 16: the last letter in the low byte, as tail() packs words
    static constexpr u64 pack(const char* s) {
        u8 n = clen(s);
        u64 k = 0;
        for (u8 i = 0; i < n; ++i) k |= static_cast<u64>(static_cast<u8>(s[n - 1 - i])) << (8 * i);
        return k;
    }
    static constexpr u64 low_bytes(u8 n) { return n >= 8 ? ~0ULL : (1ULL << (8 * n)) - 1; }

    // The word being stemmed, rewritten in place; no step makes it longer than it was (every
    // replacement is at most as long as the suffix it replaces, and step 1b's added letter
    // follows a removed "ed" or "ing"), so the caller's buffer never needs to grow.
    struct Word {
        C* p;
        size_t n;
        size_t size() const { return n; }
        C operator[](size_t i) const { return p[i]; }
        C back() const { return p[n - 1]; }
        void pop_back() { --n; }
        void push_back(C c) { p[n++] = c; }
        void replace_tail(size_t keep, const char* repl, u8 rlen) {
            n = keep;
            for (u8 i = 0; i < rlen; ++i) p[n++] = static_cast<C>(static_cast<u8>(repl[i]));
        }
        // the last 8 letters packed like pack(), the zeros before the word (stem() pads it) above
        // a shorter one; a code point past ASCII packs as 0x80, which no suffix letter equals
        u64 tail() const {
            u64 t;
            if constexpr (sizeof(C) == 1) {  // ASCII: one load
                std::memcpy(&t, p + n - 8, 8);
                return __builtin_bswap64(t);
            } else {
                t = 0;
                for (size_t i = 0; i < 8; ++i) {
                    auto c = static_cast<u32>(p[n - 1 - i]);
                    t |= static_cast<u64>(c < 0x80 ? c : 0x80) << (8 * i);
                }
                return t;
            }
        }
    };

    // w ends with suf, whose letters are all non-zero (so a word shorter than suf never matches)
    struct Suffix {
        u64 key, mask;
        u8 len;
        bool in(u64 tail) const { return (tail & mask) == key; }
    };
    static constexpr Suffix suffix(const char* s) { return Suffix{pack(s), low_bytes(clen(s)), clen(s)}; }
    static bool ends(const Word& w, const Suffix& s) { return s.in(w.tail()); }

    static bool vowel(C c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

    // _is_consonant of w[i] (nltk 3.10: walks back over a run of 'y')
    static bool is_cons(const Word& w, long i) {
        if (vowel(w[static_cast<size_t>(i)])) return false;
        if (w[static_cast<size_t>(i)] == 'y') {
            bool neg = false;
            while (i > 0 && w[static_cast<size_t>(i)] == 'y') {
                neg = !neg;
                --i;
            }
            return (!vowel(w[static_cast<size_t>(i)])) != neg;
        }
        return true;
    }
    // nltk's _is_consonant at position i, given whether position i - 1 is a consonant
    static bool consonant_at(C c, size_t i, bool prev) {
        if (vowel(c)) return false;
        if (c == 'y') return i == 0 ? true : !prev;
        return true;
    }
    // _measure of w[:len]: the number of "vc" in the consonant/vowel pattern
    static int measure(const Word& w, size_t len) {
        int m = 0;
        bool prev = false;
        for (size_t i = 0; i < len; ++i) {
            bool cons = consonant_at(w[i], i, prev);
            if (i > 0 && !prev && cons) ++m;
            prev = cons;
        }
        return m;
    }
    static bool contains_vowel(const Word& w, size_t len) {
        bool prev = false;
        for (size_t i = 0; i < len; ++i) {
            bool cons = consonant_at(w[i], i, prev);
            if (!cons) return true;
            prev = cons;
        }
        return false;
    }
    static bool ends_double_consonant(const Word& w) {
        size_t n = w.size();
        return n >= 2 && w[n - 1] == w[n - 2] && is_cons(w, static_cast<long>(n) - 1);
    }
    // _ends_cvc of w[:n]
    static bool ends_cvc(const Word& w, size_t n) {
        long k = static_cast<long>(n);
        if (n >= 3 && is_cons(w, k - 3) && !is_cons(w, k - 2) && is_cons(w, k - 1) && w[n - 1] != 'w' &&
            w[n - 1] != 'x' && w[n - 1] != 'y')
            return true;
        return n == 2 && !is_cons(w, 0) && is_cons(w, 1);
    }

    enum Cond : u8 { NONE, M_GT_0, M_GT_1, ION, LOGI };
    struct Rule {
        Suffix suf;
        const char* repl;
        u8 rlen;
        Cond cond;
    };
    static constexpr Rule R(const char* suf, const char* repl, Cond cond) {
        return Rule{suffix(suf), repl, clen(repl), cond};
    }
    // A rule list grouped by the suffixes' last letters: a word can only match the rules ending
    // in its own last letter, so the first of those to match is the first of all to match.
    template <size_t N>
    struct Rules {
        Rule rule[N];
        u8 start[129];  // rules ending in byte c: rule[order[start[c] .. start[c + 1])]
        u8 order[N];
    };
    template <size_t N>
    static constexpr Rules<N> rules_of(const Rule (&list)[N]) {
        Rules<N> rs{};
        u8 k = 0;
        for (size_t r = 0; r < N; ++r) rs.rule[r] = list[r];
        for (u8 c = 0; c < 128; ++c) {
            rs.start[c] = k;
            for (u8 r = 0; r < N; ++r)
                if ((list[r].suf.key & 0xFF) == c) rs.order[k++] = r;
        }
        rs.start[128] = k;
        return rs;
    }

    // _apply_rule_list for rules without "*d": the first rule whose suffix matches decides
    template <size_t N>
    static void apply(Word& w, const Rules<N>& rs) {
        if (w.n == 0) return;
        u64 t = w.tail();
        u32 last = static_cast<u32>(t & 0xFF);  // 0x80 for a code point past ASCII: no rule
        if (last >= 128) return;
        for (u8 k = rs.start[last], end = rs.start[last + 1]; k < end; ++k) {
            const Rule& r = rs.rule[rs.order[k]];
            if (!r.suf.in(t)) continue;
            size_t len = w.n - r.suf.len;
            bool ok;
            switch (r.cond) {
                case NONE: ok = true; break;
                case M_GT_0: ok = measure(w, len) > 0; break;
                case M_GT_1: ok = measure(w, len) > 1; break;
                case ION: ok = measure(w, len) > 1 && len > 0 && (w[len - 1] == 's' || w[len - 1] == 't'); break;
                default: ok = measure(w, w.n - 3) > 0; break;  // "logi": the measure of word[:-3]
            }
            if (ok) w.replace_tail(len, r.repl, r.rlen);
            return;
        }
    }

    static void step1a(Word& w) {
        static constexpr Suffix ies = suffix("ies");
        if (w.n == 4 && ends(w, ies)) {  // "ies" -> "ie"
            w.pop_back();
            return;
        }
        static constexpr Rule list[] = {R("sses", "ss", NONE), R("ies", "i", NONE), R("ss", "ss", NONE),
                                        R("s", "", NONE)};
        static constexpr auto rules = rules_of(list);
        apply(w, rules);
    }

    static void step1b(Word& w) {
        static constexpr Suffix ied = suffix("ied"), eed = suffix("eed"), ed = suffix("ed"), ing = suffix("ing"),
                                at = suffix("at"), bl = suffix("bl"), iz = suffix("iz"), star_d = suffix("*d");
        size_t n = w.n;
        u64 t = w.tail();
        if (ied.in(t)) {
            w.replace_tail(n - 3, n == 4 ? "ie" : "i", n == 4 ? 2 : 1);
            return;
        }
        if (eed.in(t)) {
            if (measure(w, n - 3) > 0) w.pop_back();  // stem + "ee"
            return;
        }
        size_t len;
        if (ed.in(t) && contains_vowel(w, n - 2))
            len = n - 2;
        else if (ing.in(t) && contains_vowel(w, n - 3))
            len = n - 3;
        else
            return;
        w.n = len;  // intermediate_stem (non-empty: it holds a vowel)
        C last = w.back();
        t = w.tail();
        if (at.in(t) || bl.in(t) || iz.in(t)) {  // AT -> ATE, BL -> BLE, IZ -> IZE
            w.push_back('e');
            return;
        }
        // ("*d", intermediate_stem[-1], ...): a double consonant, or the literal suffix "*d";
        // either way stem[:-2] + last
        if (ends_double_consonant(w) || star_d.in(t)) {
            if (last == 'l' || last == 's' || last == 'z') return;
            w.p[len - 2] = last;
            w.pop_back();
            return;
        }
        // ("", "e", m == 1 and *o)
        if (measure(w, len) == 1 && ends_cvc(w, len)) w.push_back('e');
    }

    static void step1c(Word& w) {
        size_t n = w.n;
        if (n > 2 && w[n - 1] == 'y' && is_cons(w, static_cast<long>(n) - 2)) w.p[n - 1] = 'i';
    }

    static void step2(Word& w) {
        static constexpr Suffix alli = suffix("alli");
        while (ends(w, alli) && measure(w, w.n - 4) > 0) w.n -= 2;  // "alli" -> "al", and again
        static constexpr Rule list[] = {
            R("ational", "ate", M_GT_0), R("tional", "tion", M_GT_0), R("enci", "ence", M_GT_0),
            R("anci", "ance", M_GT_0),   R("izer", "ize", M_GT_0),    R("bli", "ble", M_GT_0),
            R("alli", "al", M_GT_0),     R("entli", "ent", M_GT_0),   R("eli", "e", M_GT_0),
            R("ousli", "ous", M_GT_0),   R("ization", "ize", M_GT_0), R("ation", "ate", M_GT_0),
            R("ator", "ate", M_GT_0),    R("alism", "al", M_GT_0),    R("iveness", "ive", M_GT_0),
            R("fulness", "ful", M_GT_0), R("ousness", "ous", M_GT_0), R("aliti", "al", M_GT_0),
            R("iviti", "ive", M_GT_0),   R("biliti", "ble", M_GT_0),  R("fulli", "ful", M_GT_0),
            R("logi", "log", LOGI),
        };
        static constexpr auto rules = rules_of(list);
        apply(w, rules);
    }

    static void step3(Word& w) {
        static constexpr Rule list[] = {R("icate", "ic", M_GT_0), R("ative", "", M_GT_0), R("alize", "al", M_GT_0),
                                        R("iciti", "ic", M_GT_0), R("ical", "ic", M_GT_0), R("ful", "", M_GT_0),
                                        R("ness", "", M_GT_0)};
        static constexpr auto rules = rules_of(list);
        apply(w, rules);
    }

    static void step4(Word& w) {
        static constexpr Rule list[] = {
            R("al", "", M_GT_1),    R("ance", "", M_GT_1), R("ence", "", M_GT_1), R("er", "", M_GT_1),
            R("ic", "", M_GT_1),    R("able", "", M_GT_1), R("ible", "", M_GT_1), R("ant", "", M_GT_1),
            R("ement", "", M_GT_1), R("ment", "", M_GT_1), R("ent", "", M_GT_1),  R("ion", "", ION),
            R("ou", "", M_GT_1),    R("ism", "", M_GT_1),  R("ate", "", M_GT_1),  R("iti", "", M_GT_1),
            R("ous", "", M_GT_1),   R("ive", "", M_GT_1),  R("ize", "", M_GT_1),
        };
        static constexpr auto rules = rules_of(list);
        apply(w, rules);
    }

    static void step5a(Word& w) {
        size_t n = w.n;
        if (n == 0 || w[n - 1] != 'e') return;
        int m = measure(w, n - 1);
        if (m > 1 || (m == 1 && !ends_cvc(w, n - 1))) w.pop_back();
    }

    static void step5b(Word& w) {
        static constexpr Suffix ll = suffix("ll");
        if (ends(w, ll) && measure(w, w.n - 1) > 1) w.pop_back();
    }

    // nltk's pool of irregular forms, looked up with the lower-cased word
    struct Irregular {
        u64 word;  // packed: the whole word (3 to 8 letters), zero above it
        const char* stem;
        u8 slen;
    };
    static constexpr Irregular I(const char* word, const char* stem) { return Irregular{pack(word), stem, clen(stem)}; }
    static bool pool(Word& w) {
        static constexpr Irregular table[] = {
            I("sky", "sky"),        I("skies", "sky"),       I("dying", "die"),        I("lying", "lie"),
            I("tying", "tie"),      I("news", "news"),       I("innings", "inning"),   I("inning", "inning"),
            I("outings", "outing"), I("outing", "outing"),   I("cannings", "canning"), I("canning", "canning"),
            I("howe", "howe"),      I("proceed", "proceed"), I("exceed", "exceed"),    I("succeed", "succeed"),
        };
        if (w.n < 3 || w.n > 8) return false;
        u64 t = w.tail();  // the whole word
        for (const Irregular& e : table) {
            if (e.word == t) {
                w.replace_tail(0, e.stem, e.slen);
                return true;
            }
        }
        return false;
    }

  public:
    // p[0 .. n), already lower-cased, becomes its stem, whose length is returned; original_len is
    // len() of the word before lower(). The word is stemmed in a copy with 8 zeros before it, for
    // Word::tail(). (A char word must be ASCII.)
    static size_t stem(C* p, size_t n, size_t original_len) {
        constexpr size_t PAD = 8, SHORT = 56;
        C local[PAD + SHORT];
        thread_local std::vector<C> long_word;
        C* b = local;
        if (n > SHORT) {
            long_word.assign(PAD + n, C(0));
            b = long_word.data();
        } else {
            for (size_t i = 0; i < PAD; ++i) local[i] = C(0);
        }
        std::copy(p, p + n, b + PAD);
        Word w{b + PAD, n};
        if (!pool(w) && original_len > 2) {
            step1a(w);
            step1b(w);
            step1c(w);
            step2(w);
            step3(w);
            step4(w);
            step5a(w);
            step5b(w);
        }
        std::copy(w.p, w.p + w.n, p);
        return w.n;
    }
};

// nltk PorterStemmer().stem(word) for any UTF-8 word.
inline std::string porter_stem(std::string_view word) {
    if (is_ascii(word)) {
        std::string low(word);
        for (char& c : low)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        low.resize(Porter<char>::stem(low.data(), low.size(), word.size()));
        return low;
    }
    std::vector<u32> cps, low;
    utf8_to_cps(word, cps);
    if (!py_lower_cps(cps, low)) {
        std::string l;
        python_lower(word, l);
        utf8_to_cps(l, low);
    }
    std::u32string w(low.begin(), low.end());
    w.resize(Porter<char32_t>::stem(w.data(), w.size(), cps.size()));
    std::string out;
    for (char32_t c : w) encode_utf8(static_cast<u32>(c), out);
    return out;
}

// A lower-case ASCII word p[0 .. n) (the rouge-score tokenizer's tokens) becomes its stem, in
// place; returns the stem's length.
inline size_t porter_stem_ascii_lower(char* p, size_t n) { return Porter<char>::stem(p, n, n); }

}  // namespace tgm
