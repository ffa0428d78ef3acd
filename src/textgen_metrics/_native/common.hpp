// Shared pieces of the native core: UTF-8, Python-exact lower-casing, a string interner and
// small hash containers. Everything here runs without the GIL except where noted.
#pragma once

#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tgm {

using u8 = uint8_t;
using u32 = uint32_t;
using u64 = uint64_t;

// ---------------------------------------------------------------------------------------------
// UTF-8. Input comes from PyUnicode_AsUTF8AndSize or, for strings with lone surrogates, from
// encode("utf-8", "surrogatepass"): surrogates are decoded as their code points.
inline u32 decode_utf8(const char* s, size_t n, size_t& i) {
    u8 c = static_cast<u8>(s[i]);
    if (c < 0x80) { ++i; return c; }
    if (c < 0xE0 && i + 1 < n) {
        u32 cp = ((c & 0x1Fu) << 6) | (static_cast<u8>(s[i + 1]) & 0x3Fu);
        i += 2;
        return cp;
    }
    if (c < 0xF0 && i + 2 < n) {
        u32 cp = ((c & 0x0Fu) << 12) | ((static_cast<u8>(s[i + 1]) & 0x3Fu) << 6) |
                 (static_cast<u8>(s[i + 2]) & 0x3Fu);
        i += 3;
        return cp;
    }
    if (i + 3 < n) {
        u32 cp = ((c & 0x07u) << 18) | ((static_cast<u8>(s[i + 1]) & 0x3Fu) << 12) |
                 ((static_cast<u8>(s[i + 2]) & 0x3Fu) << 6) | (static_cast<u8>(s[i + 3]) & 0x3Fu);
        i += 4;
        return cp;
    }
    ++i;  // truncated sequence (cannot come from Python): skip the byte
    return 0xFFFD;
}

inline void encode_utf8(u32 cp, std::string& out) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

inline void utf8_to_cps(std::string_view s, std::vector<u32>& out) {
    out.clear();
    size_t i = 0;
    while (i < s.size()) out.push_back(decode_utf8(s.data(), s.size(), i));
}

inline bool is_ascii(std::string_view s) {
    for (char c : s)
        if (static_cast<u8>(c) >= 0x80) return false;
    return true;
}

// ---------------------------------------------------------------------------------------------
// Python's str.lower(), exactly. Per code point, lower() is the simple lower-case mapping of the
// interpreter's own tables (Py_UNICODE_TOLOWER, a pure table look-up that needs no GIL), except
// for U+0130 (full mapping "i" + U+0307) and U+03A3, whose lower case depends on its context
// (final sigma); a text holding U+03A3 is lowered by Python itself (the GIL is taken for it:
// rare, Greek capitals only). tests/test_native.py checks every code point against str.lower.
inline bool lower_cp(u32 c, std::vector<u32>& out) {
    if (c < 0x80) {
        out.push_back((c >= 'A' && c <= 'Z') ? c + 32 : c);
    } else if (c == 0x130) {
        out.push_back('i');
        out.push_back(0x307);
    } else if (c == 0x3A3) {
        return false;
    } else {
        out.push_back(Py_UNICODE_TOLOWER(c));
    }
    return true;
}

// str.lower() run by Python (with the GIL), for the final-sigma rule.
inline void python_lower(std::string_view s, std::string& out) {
    PyGILState_STATE g = PyGILState_Ensure();
    out.clear();
    PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogatepass");
    PyObject* l = u ? PyObject_CallMethod(u, "lower", nullptr) : nullptr;
    PyObject* b = l ? PyUnicode_AsEncodedString(l, "utf-8", "surrogatepass") : nullptr;
    if (b) out.assign(PyBytes_AS_STRING(b), static_cast<size_t>(PyBytes_GET_SIZE(b)));
    else PyErr_Clear();
    Py_XDECREF(b);
    Py_XDECREF(l);
    Py_XDECREF(u);
    PyGILState_Release(g);
}

// str.lower() of code points; false when they hold U+03A3 (use python_lower).
inline bool py_lower_cps(const std::vector<u32>& cps, std::vector<u32>& out) {
    out.clear();
    for (u32 c : cps)
        if (!lower_cp(c, out)) return false;
    return true;
}

// str.lower() of UTF-8 text into UTF-8.
inline void py_lower(std::string_view s, std::string& out) {
    out.clear();
    if (is_ascii(s)) {
        out.resize(s.size());
        for (size_t i = 0; i < s.size(); ++i) {
            char c = s[i];
            out[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
        }
        return;
    }
    thread_local std::vector<u32> cps, low;
    utf8_to_cps(s, cps);
    if (!py_lower_cps(cps, low)) {
        python_lower(s, out);
        return;
    }
    for (u32 c : low) encode_utf8(c, out);
}

// str.isspace() of one code point (what str.split() and str.rstrip() use).
inline bool py_isspace(u32 c) { return Py_UNICODE_ISSPACE(c); }

// ---------------------------------------------------------------------------------------------
// Hashing.
inline u64 mix64(u64 h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

inline u64 hash_bytes(const char* p, size_t n) {
    u64 h = 0x9E3779B97F4A7C15ULL ^ (n * 0x100000001B3ULL);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        u64 w;
        std::memcpy(&w, p + i, 8);
        h = (h ^ mix64(w)) * 0x9FB21C651E98DF25ULL;
    }
    if (i < n) {
        u64 w = 0;
        std::memcpy(&w, p + i, n - i);
        h = (h ^ mix64(w)) * 0x9FB21C651E98DF25ULL;
    }
    return mix64(h);
}

// String -> dense id (0, 1, 2, ...). Strings live in one arena.
class Interner {
  public:
    Interner() { rehash(1024); }

    u32 intern(const char* p, size_t n) {
        u64 h = hash_bytes(p, n);
        size_t mask = slots_.size() - 1;
        size_t i = h & mask;
        u32 tag = static_cast<u32>(h >> 32);
        while (true) {
            Slot& s = slots_[i];
            if (s.id == EMPTY) break;
            if (s.tag == tag) {
                const Entry& e = entries_[s.id];
                if (e.len == n && std::memcmp(arena_.data() + e.off, p, n) == 0) return s.id;
            }
            i = (i + 1) & mask;
        }
        u32 id = static_cast<u32>(entries_.size());
        entries_.push_back({arena_.size(), static_cast<u32>(n), tag, static_cast<u32>(h)});
        arena_.append(p, n);
        slots_[i] = {id, tag};
        if (entries_.size() * 2 > slots_.size()) rehash(slots_.size() * 2);
        return id;
    }
    u32 intern(std::string_view s) { return intern(s.data(), s.size()); }

    // room for n strings (of about 8 bytes) without growing
    void reserve(size_t n) {
        size_t cap = slots_.size();
        while (cap < n * 2) cap *= 2;
        if (cap != slots_.size()) rehash(cap);
        entries_.reserve(n);
        arena_.reserve(n * 8);
    }

    // id of s, or NONE when s was never interned
    u32 find(std::string_view s) const {
        u64 h = hash_bytes(s.data(), s.size());
        size_t mask = slots_.size() - 1;
        size_t i = h & mask;
        u32 tag = static_cast<u32>(h >> 32);
        while (true) {
            const Slot& sl = slots_[i];
            if (sl.id == EMPTY) return NONE;
            if (sl.tag == tag) {
                const Entry& e = entries_[sl.id];
                if (e.len == s.size() && std::memcmp(arena_.data() + e.off, s.data(), s.size()) == 0)
                    return sl.id;
            }
            i = (i + 1) & mask;
        }
    }

    std::string_view str(u32 id) const {
        const Entry& e = entries_[id];
        return std::string_view(arena_.data() + e.off, e.len);
    }
    size_t size() const { return entries_.size(); }
    void clear() {
        entries_.clear();
        arena_.clear();
        std::fill(slots_.begin(), slots_.end(), Slot{EMPTY, 0});
    }

    static constexpr u32 NONE = 0xFFFFFFFFu;

  private:
    static constexpr u32 EMPTY = 0xFFFFFFFFu;
    struct Slot {
        u32 id;
        u32 tag;
    };
    struct Entry {
        size_t off;
        u32 len;
        u32 tag;  // the hash's high half
        u32 lo;   // and its low half: growing the table moves entries without hashing them again
    };
    void rehash(size_t cap) {
        slots_.assign(cap, Slot{EMPTY, 0});
        size_t mask = cap - 1;
        for (u32 id = 0; id < entries_.size(); ++id) {
            const Entry& e = entries_[id];
            size_t i = e.lo & mask;
            while (slots_[i].id != EMPTY) i = (i + 1) & mask;
            slots_[i] = {id, e.tag};
        }
    }
    std::vector<Slot> slots_;
    std::vector<Entry> entries_;
    std::string arena_;
};

// Word -> u32, for a tokenizer's per-token look-up. A slot holds the word's first 8 bytes and a
// tag made of hash bits and the length, so a word of up to 8 bytes (most words) is found by
// reading one 16-byte slot, which also holds its value; a longer one's slot points to its entry
// (value, place in the arena), where the rest is compared. (An Interner's look-up reads its slot,
// its entry and the arena: three cache misses per token once a large batch's vocabulary outgrows
// the cache.) Filled up to 3/4, at 21 to 43 bytes of table a word: a probe run stays short and
// mostly within the 64-byte line of its first slot, and a batch's first pass over its words
// touches (and faults in) half the memory of a half-full table. A slot's
// place comes from the tag's hash bits, so growing the table moves slots without hashing their
// words again; one look-up both finds a word and, when it is new, places it.
class WordMap {
  public:
    WordMap() { rehash(MIN_CAP); }

    // the value of word p[0 .. n); a new word is added (fresh = true) with the value to set,
    // which stays valid until the next new word
    u32& lookup(const char* p, size_t n, bool& fresh) {
        u64 head = head_of(p, n);
        u32 tag = tag_of(hash_bytes(p, n), n);
        size_t mask = slots_.size() - 1;
        size_t i = (tag >> 8) & mask;
        for (;; i = (i + 1) & mask) {
            Slot& s = slots_[i];
            if (s.tag == 0) break;
            if (s.tag != tag || s.head != head) continue;
            if (n <= 8) {
                fresh = false;
                return s.val;
            }
            Long& l = longs_[s.val];
            if (l.len == n && std::memcmp(arena_.data() + l.off + 8, p + 8, n - 8) == 0) {
                fresh = false;
                return l.val;
            }
        }
        fresh = true;
        if ((count_ + 1) * 4 > slots_.size() * 3) {
            rehash(slots_.size() * 2);
            i = place(tag);
        }
        Slot& s = slots_[i];
        s = Slot{head, tag, 0};
        ++count_;
        if (n <= 8) return s.val;
        s.val = static_cast<u32>(longs_.size());
        longs_.push_back({arena_.size(), n, 0});
        arena_.append(p, n);
        return longs_.back().val;
    }

    // room for `words` words without growing (at most 2^22 slots are reserved this way)
    void reserve(size_t words) {
        size_t cap = slots_.size();
        size_t want = words * 4 / 3 < MAX_RESERVE ? words * 4 / 3 : MAX_RESERVE;
        while (cap < want) cap *= 2;
        if (cap != slots_.size()) rehash(cap);
    }

    size_t size() const { return count_; }
    void clear() {
        count_ = 0;
        longs_.clear();
        arena_.clear();
        std::fill(slots_.begin(), slots_.end(), Slot{0, 0, 0});
    }

  private:
    static constexpr size_t MIN_CAP = 1024;
    static constexpr size_t MAX_RESERVE = size_t(1) << 22;
    // a slot's home is (tag >> 8) & mask: 24 hash bits, enough for 2^24 slots, over 12 million
    // words at 3/4 fill (a tokenizer clears the table at 2^22); past that, homes crowd into the
    // first 2^24 slots, and look-ups stay right but slow down
    struct Slot {
        u64 head;  // the first 8 bytes, zero after a shorter word
        u32 tag;   // hash bits, and min(length, 254) + 1 in the low byte; 0: empty slot
        u32 val;   // the value; for a word over 8 bytes, its index in longs_
    };
    struct Long {
        size_t off;  // the whole word in arena_
        size_t len;
        u32 val;
    };
    static u64 head_of(const char* p, size_t n) {
        u64 w = 0;
        std::memcpy(&w, p, n < 8 ? n : 8);
        return w;
    }
    static u32 tag_of(u64 h, size_t n) {
        return (static_cast<u32>(h >> 32) & 0xFFFFFF00u) | static_cast<u32>((n < 254 ? n : 254) + 1);
    }
    size_t place(u32 tag) const {
        size_t mask = slots_.size() - 1;
        size_t i = (tag >> 8) & mask;
        while (slots_[i].tag != 0) i = (i + 1) & mask;
        return i;
    }
    void rehash(size_t cap) {
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(cap, Slot{0, 0, 0});
        for (const Slot& s : old)
            if (s.tag != 0) slots_[place(s.tag)] = s;
    }
    std::vector<Slot> slots_;
    std::vector<Long> longs_;
    std::string arena_;
    size_t count_ = 0;
};

// u64 key -> u32 counter, open addressing, cleared in O(used) between uses.
class U64Counter {
  public:
    U64Counter() { keys_.assign(64, EMPTY); vals_.assign(64, 0); }

    void clear() {
        for (size_t i : used_) keys_[i] = EMPTY;
        used_.clear();
    }
    void reserve(size_t n) {
        size_t need = 64;
        while (need < n * 2) need <<= 1;
        if (need > keys_.size()) {
            clear();
            keys_.assign(need, EMPTY);
            vals_.assign(need, 0);
        }
    }
    // slot of key, inserted with count 0 when absent
    u32& at(u64 key) {
        size_t mask = keys_.size() - 1;
        size_t i = mix64(key) & mask;
        while (true) {
            if (keys_[i] == key) return vals_[i];
            if (keys_[i] == EMPTY) {
                if ((used_.size() + 1) * 2 > keys_.size()) {
                    grow();
                    return at(key);
                }
                keys_[i] = key;
                vals_[i] = 0;
                used_.push_back(i);
                return vals_[i];
            }
            i = (i + 1) & mask;
        }
    }
    u32* find(u64 key) {
        size_t mask = keys_.size() - 1;
        size_t i = mix64(key) & mask;
        while (true) {
            if (keys_[i] == key) return &vals_[i];
            if (keys_[i] == EMPTY) return nullptr;
            i = (i + 1) & mask;
        }
    }
    size_t size() const { return used_.size(); }

  private:
    static constexpr u64 EMPTY = ~0ULL;
    void grow() {
        std::vector<u64> ok;
        std::vector<u32> ov;
        ok.reserve(used_.size());
        ov.reserve(used_.size());
        for (size_t i : used_) {
            ok.push_back(keys_[i]);
            ov.push_back(vals_[i]);
        }
        size_t cap = keys_.size() * 2;
        keys_.assign(cap, EMPTY);
        vals_.assign(cap, 0);
        used_.clear();
        for (size_t k = 0; k < ok.size(); ++k) at(ok[k]) = ov[k];
    }
    std::vector<u64> keys_;
    std::vector<u32> vals_;
    std::vector<size_t> used_;
};

// Per-id scratch arrays with O(1) reset by stamping.
struct Stamped {
    struct Cell {
        u32 stamp;
        u32 val;
    };
    std::vector<Cell> cells;  // a token's stamp and value side by side: one cache line per look-up
    u32 now = 0;
    void ensure(size_t n) {
        if (cells.size() < n) cells.resize(n, Cell{0, 0});
    }
    void reset() {
        if (++now == 0) {
            for (Cell& c : cells) c.stamp = 0;
            now = 1;
        }
    }
    bool has(u32 id) const { return cells[id].stamp == now; }
    u32 get(u32 id) const {
        const Cell& c = cells[id];
        return c.stamp == now ? c.val : 0;
    }
    u32& ref(u32 id) {
        Cell& c = cells[id];
        if (c.stamp != now) {
            c.stamp = now;
            c.val = 0;
        }
        return c.val;
    }
};

}  // namespace tgm
