// nltk's word_tokenize(text, preserve_line=True): NLTKWordTokenizer's rules (nltk 3.10), in its
// order, each a hand-written scan with the semantics of re.sub (leftmost, non-overlapping, on
// the text as the previous rule left it). Character classes are those of the engines nltk
// compiles the rules with: the regex module for the quote, punctuation, bracket and dash rules
// (its \w, \s, \d: treebank_tables.hpp), stdlib re for the contractions (\w = str.isalnum() or
// "_", \s = str.isspace(), and IGNORECASE's extra letters: U+0130 and U+0131 for "i", U+017F for
// "s"); regex's IGNORECASE adds U+0130 for "i" and U+017F for "s".
#pragma once

#include <string>

#include "common.hpp"
#include "treebank_tables.hpp"

namespace tgm {

using U32 = std::u32string;

inline bool in_ranges(const uint32_t (*r)[2], unsigned n, u32 c) {
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (c < r[mid][0])
            hi = mid;
        else if (c > r[mid][1])
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

struct TreebankTokenizer {
    static bool rx_w(u32 c) {
        if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        return in_ranges(RX_WORD, RX_WORD_N, c);
    }
    static bool rx_s(u32 c) {
        if (c < 0x80) return c == ' ' || (c >= 9 && c <= 13);
        return in_ranges(RX_SPACE, RX_SPACE_N, c);
    }
    static bool rx_d(u32 c) {
        if (c < 0x80) return c >= '0' && c <= '9';
        return in_ranges(RX_DIGIT, RX_DIGIT_N, c);
    }
    static bool re_w(u32 c) {
        if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        return Py_UNICODE_ISALNUM(c);
    }
    static bool re_s(u32 c) { return Py_UNICODE_ISSPACE(c); }

    // one pattern letter (lower-case ASCII) against c, case-insensitively
    static bool ci_re(u32 c, char l) {
        if (c == static_cast<u32>(l) || c == static_cast<u32>(l - 32)) return true;
        if (l == 'i') return c == 0x130 || c == 0x131;
        if (l == 's') return c == 0x17F;
        return false;
    }
    static bool ci_rx(u32 c, char l) {
        if (c == static_cast<u32>(l) || c == static_cast<u32>(l - 32)) return true;
        if (l == 'i') return c == 0x130;
        if (l == 's') return c == 0x17F;
        return false;
    }

    static bool at_end_or_before_final_newline(const U32& s, size_t i) {
        return i == s.size() || (i + 1 == s.size() && s[i] == '\n');
    }

    // ([«“‘„]|[`]+) -> " \1 "
    static void starting_quotes_1(U32& s) {
        U32 o;
        o.reserve(s.size() + 8);
        for (size_t i = 0; i < s.size();) {
            u32 c = s[i];
            if (c == 0xAB || c == 0x201C || c == 0x2018 || c == 0x201E) {
                o += U' ';
                o += c;
                o += U' ';
                ++i;
            } else if (c == '`') {
                size_t j = i;
                while (j < s.size() && s[j] == '`') ++j;
                o += U' ';
                o.append(s, i, j - i);
                o += U' ';
                i = j;
            } else {
                o += c;
                ++i;
            }
        }
        s.swap(o);
    }

    // (?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w) -> "\1 "
    static bool s5_lookahead_blocks(const U32& s, size_t p) {
        static const char* const alts[] = {"re", "ve", "ll", "m", "t", "s", "d", "n"};
        for (const char* a : alts) {
            size_t k = 0;
            while (a[k] && p + k < s.size() && ci_rx(s[p + k], a[k])) ++k;
            if (a[k]) continue;
            size_t q = p + k;  // \b after a word character
            if (q == s.size() || !rx_w(s[q])) return true;
        }
        return false;
    }
    static void starting_quotes_5(U32& s) {
        U32 o;
        o.reserve(s.size() + 8);
        for (size_t i = 0; i < s.size(); ++i) {
            u32 c = s[i];
            o += c;
            if (c == '\'' && (i == 0 || !rx_w(s[i - 1])) && i + 1 < s.size() && rx_w(s[i + 1]) &&
                !s5_lookahead_blocks(s, i + 1))
                o += U' ';
        }
        s.swap(o);
    }

    // ([^\.])(\.)(closers*)\s*$ -> "\1 \2 \3 " (possessive_space: the first rule's closers,
    // which include the space and »”’) or "\1 \2\3 " (the second rule's)
    static void final_period(U32& s, bool first_rule) {
        size_t n = s.size();
        if (n < 2) return;
        auto closer = [&](u32 c) {
            if (c == ']' || c == ')' || c == '}' || c == '>' || c == '"' || c == '\'') return true;
            return first_rule && (c == 0xBB || c == 0x201D || c == 0x2019 || c == ' ');
        };
        // ws_from[k]: s[k:] is all whitespace; run[k]: end of the closer run starting at k
        thread_local std::vector<u8> ws_from;
        thread_local std::vector<u32> run;
        ws_from.assign(n + 1, 0);
        ws_from[n] = 1;
        for (size_t k = n; k-- > 0;) ws_from[k] = ws_from[k + 1] && rx_s(s[k]);
        run.resize(n + 1);
        run[n] = static_cast<u32>(n);
        for (size_t k = n; k-- > 0;) run[k] = closer(s[k]) ? run[k + 1] : static_cast<u32>(k);
        for (size_t i = 0; i + 1 < n; ++i) {
            if (s[i] == '.' || s[i + 1] != '.') continue;
            size_t q = run[i + 2 <= n ? i + 2 : n];
            if (!ws_from[q]) continue;
            U32 o(s, 0, i + 1);
            o += U' ';
            o += U'.';
            if (first_rule) o += U' ';
            o.append(s, i + 2, q - (i + 2));
            o += U' ';
            s.swap(o);
            return;
        }
    }

    // pad every character for which pred holds: " c "
    template <class P>
    static void pad_chars(U32& s, P pred) {
        bool any = false;
        for (u32 c : s)
            if (pred(c)) {
                any = true;
                break;
            }
        if (!any) return;
        U32 o;
        o.reserve(s.size() + 16);
        for (u32 c : s) {
            if (pred(c)) {
                o += U' ';
                o += c;
                o += U' ';
            } else {
                o += c;
            }
        }
        s.swap(o);
    }

    // literal lit (non-overlapping, left to right) -> repl
    static void replace_lit(U32& s, const U32& lit, const U32& repl) {
        if (s.find(lit) == U32::npos) return;
        U32 o;
        size_t at = 0;
        while (true) {
            size_t k = s.find(lit, at);
            if (k == U32::npos) break;
            o.append(s, at, k - at);
            o += repl;
            at = k + lit.size();
        }
        o.append(s, at, U32::npos);
        s.swap(o);
    }

    // \b(A)(B)\b (end == 0), \b(A)(B)(?=\s) (end == 1), or " ('t)(B)\b" (lead_space) with re's
    // IGNORECASE -> " \1 \2 " (with lead_space the matched space is part of the text replaced)
    static void contraction(U32& s, const char* a, const char* b, int end, bool lead_space) {
        size_t la = std::strlen(a), lb = std::strlen(b), L = la + lb;
        U32 o;
        bool changed = false;
        size_t i = 0, n = s.size();
        const char first = lead_space ? '\'' : a[0];
        while (i < n) {
            bool ok = false;
            size_t start = i + (lead_space ? 1 : 0);
            bool may = start < n && (first == '\'' ? s[start] == '\'' : ci_re(s[start], first));
            if (may && (lead_space ? (s[i] == ' ') : (i == 0 || !re_w(s[i - 1])))) {
                if (start + L <= n) {
                    ok = true;
                    for (size_t k = 0; k < L && ok; ++k) {
                        char pc = k < la ? a[k] : b[k - la];
                        u32 c = s[start + k];
                        ok = (pc >= 'a' && pc <= 'z') ? ci_re(c, pc) : c == static_cast<u32>(static_cast<u8>(pc));
                    }
                    if (ok && !lead_space && !re_w(s[start])) ok = false;  // \b before: needs a word char
                    if (ok) {
                        size_t j = start + L;
                        if (end == 1)
                            ok = j < n && re_s(s[j]);
                        else
                            ok = j == n || !re_w(s[j]) ? re_w(s[j - 1]) : false;
                    }
                }
            }
            if (ok) {
                if (!changed) {
                    o.assign(s, 0, i);
                    changed = true;
                }
                o += U' ';
                o.append(s, start, la);
                o += U' ';
                o.append(s, start + la, lb);
                o += U' ';
                i = start + L;
            } else {
                if (changed) o += s[i];
                ++i;
            }
        }
        if (changed) s.swap(o);
    }

    void tokenize(std::string_view text, std::vector<std::string>& out) {
        U32 s;
        {
            size_t i = 0;
            while (i < text.size()) s += static_cast<char32_t>(decode_utf8(text.data(), text.size(), i));
        }
        // STARTING_QUOTES
        starting_quotes_1(s);
        if (!s.empty() && s[0] == '"') s = U"``" + s.substr(1);
        replace_lit(s, U"``", U" `` ");
        {  // ([ \(\[{<])(\"|\'{2}) -> "\1 `` "
            U32 o;
            bool changed = false;
            for (size_t i = 0; i < s.size();) {
                u32 c = s[i];
                size_t len = 0;
                if ((c == ' ' || c == '(' || c == '[' || c == '{' || c == '<') && i + 1 < s.size()) {
                    if (s[i + 1] == '"')
                        len = 2;
                    else if (s[i + 1] == '\'' && i + 2 < s.size() && s[i + 2] == '\'')
                        len = 3;
                }
                if (len) {
                    if (!changed) {
                        o.assign(s, 0, i);
                        changed = true;
                    }
                    o += c;
                    o += U" `` ";
                    i += len;
                } else {
                    if (changed) o += c;
                    ++i;
                }
            }
            if (changed) s.swap(o);
        }
        starting_quotes_5(s);
        // PUNCTUATION
        final_period(s, true);
        {  // ([:,])([^\d]) -> " \1 \2"
            U32 o;
            bool changed = false;
            for (size_t i = 0; i < s.size();) {
                if ((s[i] == ':' || s[i] == ',') && i + 1 < s.size() && !rx_d(s[i + 1])) {
                    if (!changed) {
                        o.assign(s, 0, i);
                        changed = true;
                    }
                    o += U' ';
                    o += s[i];
                    o += U' ';
                    o += s[i + 1];
                    i += 2;
                } else {
                    if (changed) o += s[i];
                    ++i;
                }
            }
            if (changed) s.swap(o);
        }
        {  // ([:,])$ -> " \1 "
            size_t n = s.size();
            for (size_t i = (n >= 2 ? n - 2 : 0); i < n; ++i) {
                if ((s[i] == ':' || s[i] == ',') && at_end_or_before_final_newline(s, i + 1)) {
                    U32 o(s, 0, i);
                    o += U' ';
                    o += s[i];
                    o += U' ';
                    o.append(s, i + 1, U32::npos);
                    s.swap(o);
                    break;
                }
            }
        }
        {  // \.{2,} -> " \g<0> "
            U32 o;
            bool changed = false;
            for (size_t i = 0; i < s.size();) {
                if (s[i] == '.' && i + 1 < s.size() && s[i + 1] == '.') {
                    size_t j = i;
                    while (j < s.size() && s[j] == '.') ++j;
                    if (!changed) {
                        o.assign(s, 0, i);
                        changed = true;
                    }
                    o += U' ';
                    o.append(s, i, j - i);
                    o += U' ';
                    i = j;
                } else {
                    if (changed) o += s[i];
                    ++i;
                }
            }
            if (changed) s.swap(o);
        }
        pad_chars(s, [](u32 c) { return c == ';' || c == '@' || c == '#' || c == '$' || c == '%' || c == '&'; });
        pad_chars(s, [](u32 c) { return c >= 0x2012 && c <= 0x2015; });
        final_period(s, false);
        pad_chars(s, [](u32 c) { return c == '?' || c == '!'; });
        {  // ([^'])' " -> "\1 ' "
            U32 o;
            bool changed = false;
            for (size_t i = 0; i < s.size();) {
                if (s[i] != '\'' && i + 2 < s.size() && s[i + 1] == '\'' && s[i + 2] == ' ') {
                    if (!changed) {
                        o.assign(s, 0, i);
                        changed = true;
                    }
                    o += s[i];
                    o += U" ' ";
                    i += 3;
                } else {
                    if (changed) o += s[i];
                    ++i;
                }
            }
            if (changed) s.swap(o);
        }
        pad_chars(s, [](u32 c) { return c == '*'; });
        // PARENS_BRACKETS, DOUBLE_DASHES
        pad_chars(s, [](u32 c) {
            return c == ']' || c == '[' || c == '(' || c == ')' || c == '{' || c == '}' || c == '<' || c == '>';
        });
        replace_lit(s, U"--", U" -- ");
        s = U" " + s + U" ";
        // ENDING_QUOTES
        pad_chars(s, [](u32 c) { return c == 0xBB || c == 0x201D || c == 0x2019; });
        replace_lit(s, U"''", U" '' ");
        replace_lit(s, U"\"", U" '' ");
        {  // \s+ -> " "
            U32 o;
            o.reserve(s.size());
            for (size_t i = 0; i < s.size();) {
                if (rx_s(s[i])) {
                    while (i < s.size() && rx_s(s[i])) ++i;
                    o += U' ';
                } else {
                    o += s[i++];
                }
            }
            s.swap(o);
        }
        {  // ([^' ])('[sS]|'[mM]|'[dD]|') " -> "\1 \2 "
            U32 o;
            bool changed = false;
            for (size_t i = 0; i < s.size();) {
                size_t len = 0;
                if (s[i] != '\'' && s[i] != ' ' && i + 2 < s.size() && s[i + 1] == '\'') {
                    u32 c = s[i + 2];
                    bool letter = c == 's' || c == 'S' || c == 'm' || c == 'M' || c == 'd' || c == 'D';
                    if (letter && i + 3 < s.size() && s[i + 3] == ' ')
                        len = 4;
                    else if (c == ' ')
                        len = 3;
                }
                if (len) {
                    if (!changed) {
                        o.assign(s, 0, i);
                        changed = true;
                    }
                    o += s[i];
                    o += U' ';
                    o.append(s, i + 1, len - 2);
                    o += U' ';
                    i += len;
                } else {
                    if (changed) o += s[i];
                    ++i;
                }
            }
            if (changed) s.swap(o);
        }
        {  // ([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) " -> "\1 \2 "
            static const char32_t* const alts[] = {U"'ll", U"'LL", U"'re", U"'RE", U"'ve", U"'VE", U"n't", U"N'T"};
            U32 o;
            bool changed = false;
            for (size_t i = 0; i < s.size();) {
                bool ok = false;
                if (s[i] != '\'' && s[i] != ' ' && i + 4 < s.size() && s[i + 4] == ' ') {
                    for (const char32_t* a : alts)
                        if (s[i + 1] == a[0] && s[i + 2] == a[1] && s[i + 3] == a[2]) ok = true;
                }
                if (ok) {
                    if (!changed) {
                        o.assign(s, 0, i);
                        changed = true;
                    }
                    o += s[i];
                    o += U' ';
                    o.append(s, i + 1, 3);
                    o += U' ';
                    i += 5;
                } else {
                    if (changed) o += s[i];
                    ++i;
                }
            }
            if (changed) s.swap(o);
        }
        // CONTRACTIONS2, CONTRACTIONS3 (stdlib re)
        contraction(s, "can", "not", 0, false);
        contraction(s, "d", "'ye", 0, false);
        contraction(s, "gim", "me", 0, false);
        contraction(s, "gon", "na", 0, false);
        contraction(s, "got", "ta", 0, false);
        contraction(s, "lem", "me", 0, false);
        contraction(s, "more", "'n", 0, false);
        contraction(s, "wan", "na", 1, false);
        contraction(s, "'t", "is", 0, true);
        contraction(s, "'t", "was", 0, true);
        // text.split()
        out.clear();
        std::string cur;
        bool in = false;
        for (char32_t c : s) {
            if (Py_UNICODE_ISSPACE(static_cast<u32>(c))) {
                if (in) {
                    out.push_back(cur);
                    cur.clear();
                    in = false;
                }
            } else {
                encode_utf8(static_cast<u32>(c), cur);
                in = true;
            }
        }
        if (in) out.push_back(cur);
    }
};

}  // namespace tgm
