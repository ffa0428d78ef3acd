// nltk's PorterStemmer in its default NLTK_EXTENSIONS mode (the mode rouge-score and nltk's
// METEOR use), rule for rule: nltk/stem/porter.py of nltk 3.10, including its quirks (the
// length test on the word before lower-casing, the literal "*d" suffix of step 1b, the "alli"
// recursion and the "logi" condition of step 2). Words are sequences of code points; only ASCII
// letters take part in the rules, every other code point is a consonant, as in Python.
#pragma once

#include <string>

#include "common.hpp"

namespace tgm {

template <class S>
class Porter {
    using C = typename S::value_type;

    static bool vowel(C c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

    static bool ends(const S& w, const char* suf) {
        size_t n = std::strlen(suf);
        if (w.size() < n) return false;
        size_t off = w.size() - n;
        for (size_t i = 0; i < n; ++i)
            if (w[off + i] != static_cast<C>(static_cast<u8>(suf[i]))) return false;
        return true;
    }
    static void append(S& w, const char* s) {
        for (; *s; ++s) w.push_back(static_cast<C>(static_cast<u8>(*s)));
    }
    static S prefix(const S& w, size_t n) { return S(w.begin(), w.begin() + static_cast<long>(n)); }

    // _is_consonant (nltk 3.10: walks back over a run of 'y')
    static bool is_cons(const S& w, long i) {
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
    static int measure(const S& w, size_t len) {
        int m = 0;
        bool prev = false;
        for (size_t i = 0; i < len; ++i) {
            bool cons = consonant_at(w[i], i, prev);
            if (i > 0 && !prev && cons) ++m;
            prev = cons;
        }
        return m;
    }
    static bool contains_vowel(const S& w, size_t len) {
        bool prev = false;
        for (size_t i = 0; i < len; ++i) {
            bool cons = consonant_at(w[i], i, prev);
            if (!cons) return true;
            prev = cons;
        }
        return false;
    }
    static bool ends_double_consonant(const S& w) {
        size_t n = w.size();
        return n >= 2 && w[n - 1] == w[n - 2] && is_cons(w, static_cast<long>(n) - 1);
    }
    static bool ends_cvc(const S& w) {
        size_t n = w.size();
        if (n >= 3 && is_cons(w, static_cast<long>(n) - 3) && !is_cons(w, static_cast<long>(n) - 2) &&
            is_cons(w, static_cast<long>(n) - 1) && w[n - 1] != 'w' && w[n - 1] != 'x' && w[n - 1] != 'y')
            return true;
        return n == 2 && !is_cons(w, 0) && is_cons(w, 1);
    }

    struct Rule {
        const char* suffix;
        const char* repl;
        int cond;  // 0: none, 1: measure > 0, 2: measure > 1, 3: step-4 "ion", 4: step-2 "logi"
    };

    // _apply_rule_list for rules without "*d": the first rule whose suffix matches decides
    static S apply(const S& w, const Rule* rules, size_t n_rules) {
        for (size_t k = 0; k < n_rules; ++k) {
            const Rule& r = rules[k];
            if (!ends(w, r.suffix)) continue;
            size_t len = w.size() - std::strlen(r.suffix);
            bool ok;
            switch (r.cond) {
                case 0: ok = true; break;
                case 1: ok = measure(w, len) > 0; break;
                case 2: ok = measure(w, len) > 1; break;
                case 3:
                    ok = measure(w, len) > 1 && len > 0 && (w[len - 1] == 's' || w[len - 1] == 't');
                    break;
                default:  // "logi": the measure of word[:-3]
                    ok = measure(w, w.size() - 3) > 0;
                    break;
            }
            if (!ok) return w;
            S out = prefix(w, len);
            append(out, r.repl);
            return out;
        }
        return w;
    }

    static S step1a(const S& w) {
        if (ends(w, "ies") && w.size() == 4) {
            S out = prefix(w, 1);
            append(out, "ie");
            return out;
        }
        static const Rule rules[] = {{"sses", "ss", 0}, {"ies", "i", 0}, {"ss", "ss", 0}, {"s", "", 0}};
        return apply(w, rules, 4);
    }

    static S step1b(const S& w) {
        if (ends(w, "ied")) {
            S out = prefix(w, w.size() - 3);
            append(out, w.size() == 4 ? "ie" : "i");
            return out;
        }
        if (ends(w, "eed")) {
            if (measure(w, w.size() - 3) > 0) return prefix(w, w.size() - 1);
            return w;
        }
        size_t len = 0;
        bool ok = false;
        if (ends(w, "ed") && contains_vowel(w, w.size() - 2)) {
            len = w.size() - 2;
            ok = true;
        } else if (ends(w, "ing") && contains_vowel(w, w.size() - 3)) {
            len = w.size() - 3;
            ok = true;
        }
        if (!ok) return w;
        S s = prefix(w, len);  // intermediate_stem (non-empty: it holds a vowel)
        C last = s.back();
        static const Rule rules[] = {{"at", "ate", 0}, {"bl", "ble", 0}, {"iz", "ize", 0}};
        for (const Rule& r : rules) {
            if (ends(s, r.suffix)) {
                S out = prefix(s, s.size() - 2);
                append(out, r.repl);
                return out;
            }
        }
        bool not_lsz = !(last == 'l' || last == 's' || last == 'z');
        // ("*d", intermediate_stem[-1], ...): a double consonant, or the literal suffix "*d"
        if (ends_double_consonant(s) || ends(s, "*d")) {
            if (!not_lsz) return s;
            S out = prefix(s, s.size() - 2);
            out.push_back(last);
            return out;
        }
        // ("", "e", m == 1 and *o)
        if (measure(s, s.size()) == 1 && ends_cvc(s)) {
            S out = s;
            out.push_back('e');
            return out;
        }
        return s;
    }

    static S step1c(const S& w) {
        if (!ends(w, "y")) return w;
        size_t len = w.size() - 1;
        if (len > 1 && is_cons(w, static_cast<long>(len) - 1)) {
            S out = prefix(w, len);
            out.push_back('i');
            return out;
        }
        return w;
    }

    static S step2(const S& w) {
        if (ends(w, "alli") && measure(w, w.size() - 4) > 0) {
            S out = prefix(w, w.size() - 4);
            append(out, "al");
            return step2(out);
        }
        static const Rule rules[] = {
            {"ational", "ate", 1}, {"tional", "tion", 1}, {"enci", "ence", 1}, {"anci", "ance", 1},
            {"izer", "ize", 1},    {"bli", "ble", 1},     {"alli", "al", 1},    {"entli", "ent", 1},
            {"eli", "e", 1},       {"ousli", "ous", 1},   {"ization", "ize", 1}, {"ation", "ate", 1},
            {"ator", "ate", 1},    {"alism", "al", 1},    {"iveness", "ive", 1}, {"fulness", "ful", 1},
            {"ousness", "ous", 1}, {"aliti", "al", 1},    {"iviti", "ive", 1},  {"biliti", "ble", 1},
            {"fulli", "ful", 1},   {"logi", "log", 4},
        };
        return apply(w, rules, sizeof(rules) / sizeof(rules[0]));
    }

    static S step3(const S& w) {
        static const Rule rules[] = {{"icate", "ic", 1}, {"ative", "", 1}, {"alize", "al", 1},
                                     {"iciti", "ic", 1}, {"ical", "ic", 1}, {"ful", "", 1},
                                     {"ness", "", 1}};
        return apply(w, rules, 7);
    }

    static S step4(const S& w) {
        static const Rule rules[] = {
            {"al", "", 2},   {"ance", "", 2}, {"ence", "", 2}, {"er", "", 2},    {"ic", "", 2},
            {"able", "", 2}, {"ible", "", 2}, {"ant", "", 2},  {"ement", "", 2}, {"ment", "", 2},
            {"ent", "", 2},  {"ion", "", 3},  {"ou", "", 2},   {"ism", "", 2},   {"ate", "", 2},
            {"iti", "", 2},  {"ous", "", 2},  {"ive", "", 2},  {"ize", "", 2},
        };
        return apply(w, rules, sizeof(rules) / sizeof(rules[0]));
    }

    static S step5a(const S& w) {
        if (!ends(w, "e")) return w;
        S s = prefix(w, w.size() - 1);
        int m = measure(s, s.size());
        if (m > 1) return s;
        if (m == 1 && !ends_cvc(s)) return s;
        return w;
    }

    static S step5b(const S& w) {
        if (ends(w, "ll") && measure(w, w.size() - 1) > 1) return prefix(w, w.size() - 1);
        return w;
    }

    static bool pool(const S& w, S& out) {
        static const char* const table[][2] = {
            {"sky", "sky"},         {"skies", "sky"},     {"dying", "die"},     {"lying", "lie"},
            {"tying", "tie"},       {"news", "news"},     {"innings", "inning"}, {"inning", "inning"},
            {"outings", "outing"},  {"outing", "outing"}, {"cannings", "canning"},
            {"canning", "canning"}, {"howe", "howe"},     {"proceed", "proceed"},
            {"exceed", "exceed"},   {"succeed", "succeed"},
        };
        for (const auto& e : table) {
            size_t n = std::strlen(e[0]);
            if (w.size() != n) continue;
            bool eq = true;
            for (size_t i = 0; i < n; ++i)
                if (w[i] != static_cast<C>(static_cast<u8>(e[0][i]))) { eq = false; break; }
            if (eq) {
                out.clear();
                append(out, e[1]);
                return true;
            }
        }
        return false;
    }

  public:
    // stem of an already lower-cased word; original_len is len() of the word before lower()
    static S stem_lowered(const S& low, size_t original_len) {
        S out;
        if (pool(low, out)) return out;
        if (original_len <= 2) return low;
        S w = step1a(low);
        w = step1b(w);
        w = step1c(w);
        w = step2(w);
        w = step3(w);
        w = step4(w);
        w = step5a(w);
        w = step5b(w);
        return w;
    }
};

// nltk PorterStemmer().stem(word) for any UTF-8 word.
inline std::string porter_stem(std::string_view word) {
    if (is_ascii(word)) {
        std::string low(word);
        for (char& c : low)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
        return Porter<std::string>::stem_lowered(low, word.size());
    }
    std::vector<u32> cps, low;
    utf8_to_cps(word, cps);
    if (!py_lower_cps(cps, low)) {
        std::string l;
        python_lower(word, l);
        utf8_to_cps(l, low);
    }
    std::u32string w(low.begin(), low.end());
    std::u32string st = Porter<std::u32string>::stem_lowered(w, cps.size());
    std::string out;
    for (char32_t c : st) encode_utf8(static_cast<u32>(c), out);
    return out;
}

// Stem of a lower-case ASCII word (the rouge-score tokenizer's tokens).
inline std::string porter_stem_ascii_lower(std::string_view word) {
    return Porter<std::string>::stem_lowered(std::string(word), word.size());
}

}  // namespace tgm
