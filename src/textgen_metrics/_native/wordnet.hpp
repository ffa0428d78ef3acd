// A compact WordNet index for METEOR: what nltk's WordNetCorpusReader.synsets(word) followed by
// lemma names needs, and nothing else, built once from the WordNet files into one binary file and
// loaded by reading it (a few MB) instead of parsing the 28 MB text files in every process.
//
// synonyms(word) = {word} | {lemma.name() for synset in wn.synsets(word) for lemma in
// synset.lemmas() if "_" not in lemma.name()}, exactly as nltk 3.10 computes it:
//   synsets(): lemma.lower(), then for pos in (n, v, a, r): for form in _morphy(lemma, pos):
//   for offset in index[form][pos]: the synset at that offset of data.<pos>;
//   _morphy(): the exception list's forms if the word has an entry, else the detachment rules
//   applied once; [word] + those forms kept when the index has them for that pos;
//   lemma names: the data line's words without a trailing syntactic marker "(a)", "(p)", "(ip)".
#pragma once

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "common.hpp"

namespace tgm {

static const char WN_MAGIC[8] = {'T', 'G', 'M', 'W', 'N', '0', '0', '1'};
static const char* const WN_POS_FILE[4] = {"noun", "verb", "adj", "adv"};  // POS_LIST order n, v, a, r

class WordNetIndex {
  public:
    // ---- build from the WordNet folder --------------------------------------------------------
    static void build(const std::string& dir, const std::string& out_path) {
        WordNetIndex w;
        Interner strings;
        std::vector<std::unordered_map<u32, u32>> synset_id(4);  // per data file: offset -> synset id
        std::vector<std::vector<u32>> names;                     // synset id -> name string ids
        for (int f = 0; f < 4; ++f) {
            std::string text = read_file(dir + "/data." + WN_POS_FILE[f]);
            size_t at = 0;
            std::string_view line;
            while (next_line(text, at, line)) {
                if (line.empty() || line[0] == ' ') continue;
                size_t bar = line.find('|');
                std::vector<std::string_view> tok = split_ws(line.substr(0, bar == std::string_view::npos ? line.size() : bar));
                if (tok.size() < 4) continue;
                u32 offset = static_cast<u32>(std::stoul(std::string(tok[0])));
                u32 n_lemmas = static_cast<u32>(std::stoul(std::string(tok[3]), nullptr, 16));
                std::vector<u32> nm;
                for (u32 k = 0; k < n_lemmas && 4 + 2 * k < tok.size(); ++k) {
                    std::string_view name = strip_marker(tok[4 + 2 * k]);
                    if (name.find('_') != std::string_view::npos) continue;
                    nm.push_back(strings.intern(name));
                }
                synset_id[f][offset] = static_cast<u32>(names.size());
                names.push_back(std::move(nm));
            }
        }
        // index.<pos>: lemma pos n_synsets n_pointers [pointers] n_senses tagsense_cnt offsets
        std::vector<std::pair<std::string, std::vector<std::vector<u32>>>> forms;
        std::unordered_map<std::string, size_t> form_at;
        for (int f = 0; f < 4; ++f) {
            std::string text = read_file(dir + "/index." + WN_POS_FILE[f]);
            size_t at = 0;
            std::string_view line;
            while (next_line(text, at, line)) {
                if (line.empty() || line[0] == ' ') continue;
                std::vector<std::string_view> tok = split_ws(line);
                if (tok.size() < 4) continue;
                std::string lemma(tok[0]);
                size_t n_syn = std::stoul(std::string(tok[2]));
                size_t n_ptr = std::stoul(std::string(tok[3]));
                size_t first = 4 + n_ptr + 2;
                std::vector<u32> ids;
                for (size_t k = 0; k < n_syn && first + k < tok.size(); ++k) {
                    u32 off = static_cast<u32>(std::stoul(std::string(tok[first + k])));
                    auto it = synset_id[f].find(off);
                    if (it == synset_id[f].end()) throw std::runtime_error("WordNet index refers to a missing synset");
                    ids.push_back(it->second);
                }
                auto fit = form_at.find(lemma);
                if (fit == form_at.end()) {
                    fit = form_at.emplace(lemma, forms.size()).first;
                    forms.push_back({lemma, std::vector<std::vector<u32>>(4)});
                }
                // nltk keeps the last line of a lemma and pos (there is one per file)
                forms[fit->second].second[f] = ids;
            }
        }
        std::sort(forms.begin(), forms.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& fm : forms) {
            w.form_str_.push_back(strings.intern(fm.first));
            for (int p = 0; p < 4; ++p) {
                w.form_syn_begin_.push_back(static_cast<u32>(w.form_syn_.size()));
                w.form_syn_.insert(w.form_syn_.end(), fm.second[p].begin(), fm.second[p].end());
            }
        }
        w.form_syn_begin_.push_back(static_cast<u32>(w.form_syn_.size()));
        for (auto& nm : names) {
            w.syn_name_begin_.push_back(static_cast<u32>(w.syn_names_.size()));
            w.syn_names_.insert(w.syn_names_.end(), nm.begin(), nm.end());
        }
        w.syn_name_begin_.push_back(static_cast<u32>(w.syn_names_.size()));
        // <pos>.exc: a form and its base forms; nltk keeps the last line of a form
        for (int f = 0; f < 4; ++f) {
            std::string text = read_file(dir + "/" + WN_POS_FILE[f] + ".exc");
            std::vector<std::pair<std::string, std::vector<std::string>>> entries;
            std::unordered_map<std::string, size_t> at_of;
            size_t at = 0;
            std::string_view line;
            while (next_line(text, at, line)) {
                std::vector<std::string_view> tok = split_ws(line);
                if (tok.empty()) continue;
                std::vector<std::string> vals(tok.begin() + 1, tok.end());
                std::string key(tok[0]);
                auto it = at_of.find(key);
                if (it == at_of.end()) {
                    at_of.emplace(key, entries.size());
                    entries.push_back({key, vals});
                } else {
                    entries[it->second].second = vals;
                }
            }
            std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
            for (auto& e : entries) {
                w.exc_key_[f].push_back(strings.intern(e.first));
                w.exc_val_begin_[f].push_back(static_cast<u32>(w.exc_vals_[f].size()));
                for (auto& v : e.second) w.exc_vals_[f].push_back(strings.intern(v));
            }
            w.exc_val_begin_[f].push_back(static_cast<u32>(w.exc_vals_[f].size()));
        }
        for (u32 i = 0; i < strings.size(); ++i) {
            w.str_off_.push_back(static_cast<u32>(w.blob_.size()));
            w.blob_.append(strings.str(i));
        }
        w.str_off_.push_back(static_cast<u32>(w.blob_.size()));
        w.write(out_path);
    }

    // ---- load -----------------------------------------------------------------------------------
    explicit WordNetIndex(const std::string& path) {
        std::string data = read_file(path);
        size_t at = 0;
        if (data.size() < 8 || std::memcmp(data.data(), WN_MAGIC, 8) != 0)
            throw std::runtime_error("not a textgen_metrics WordNet index: " + path);
        at = 8;
        get_vec(data, at, str_off_);
        get_str(data, at, blob_);
        get_vec(data, at, form_str_);
        get_vec(data, at, form_syn_begin_);
        get_vec(data, at, form_syn_);
        get_vec(data, at, syn_name_begin_);
        get_vec(data, at, syn_names_);
        for (int f = 0; f < 4; ++f) {
            get_vec(data, at, exc_key_[f]);
            get_vec(data, at, exc_val_begin_[f]);
            get_vec(data, at, exc_vals_[f]);
        }
        if (at != data.size()) throw std::runtime_error("truncated or damaged WordNet index: " + path);
    }

    size_t n_forms() const { return form_str_.size(); }
    size_t n_synsets() const { return syn_name_begin_.empty() ? 0 : syn_name_begin_.size() - 1; }

    // The lemma names (besides the word itself) of every synset nltk's synsets(word) returns.
    // word must be lower-cased already (synsets() lower-cases; METEOR's words are stems).
    void synonym_names(std::string_view low, std::vector<std::string_view>& out) const {
        static const char* const NOUN[][2] = {{"s", ""},     {"ses", "s"},   {"ves", "f"},
                                              {"xes", "x"},  {"zes", "z"},   {"ches", "ch"},
                                              {"shes", "sh"}, {"men", "man"}, {"ies", "y"}};
        static const char* const VERB[][2] = {{"s", ""},   {"ies", "y"}, {"es", "e"},  {"es", ""},
                                              {"ed", "e"}, {"ed", ""},   {"ing", "e"}, {"ing", ""}};
        static const char* const ADJ[][2] = {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}};
        std::vector<std::string> forms;
        for (int p = 0; p < 4; ++p) {
            forms.clear();
            forms.emplace_back(low);
            long e = find_sorted(exc_key_[p], low);
            if (e >= 0) {
                for (u32 k = exc_val_begin_[p][e]; k < exc_val_begin_[p][e + 1]; ++k)
                    forms.emplace_back(str(exc_vals_[p][k]));
            } else {
                const char* const(*rules)[2] = p == 0 ? NOUN : p == 1 ? VERB : ADJ;
                size_t nr = p == 0 ? 9 : p == 1 ? 8 : p == 2 ? 4 : 0;
                for (size_t k = 0; k < nr; ++k) {
                    std::string_view old(rules[k][0]);
                    if (low.size() >= old.size() && low.substr(low.size() - old.size()) == old) {
                        std::string f(low.substr(0, low.size() - old.size()));
                        f += rules[k][1];
                        forms.push_back(std::move(f));
                    }
                }
            }
            for (size_t k = 0; k < forms.size(); ++k) {
                bool dup = false;
                for (size_t q = 0; q < k; ++q)
                    if (forms[q] == forms[k]) dup = true;
                if (dup) continue;
                long fi = find_sorted(form_str_, forms[k]);
                if (fi < 0) continue;
                u32 b = form_syn_begin_[static_cast<size_t>(fi) * 4 + p], en = form_syn_begin_[static_cast<size_t>(fi) * 4 + p + 1];
                for (u32 s = b; s < en; ++s) {
                    u32 syn = form_syn_[s];
                    for (u32 q = syn_name_begin_[syn]; q < syn_name_begin_[syn + 1]; ++q) out.push_back(str(syn_names_[q]));
                }
            }
        }
    }

  private:
    WordNetIndex() = default;

    std::string_view str(u32 id) const { return std::string_view(blob_.data() + str_off_[id], str_off_[id + 1] - str_off_[id]); }

    long find_sorted(const std::vector<u32>& ids, std::string_view key) const {
        size_t lo = 0, hi = ids.size();
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (str(ids[mid]) < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        return (lo < ids.size() && str(ids[lo]) == key) ? static_cast<long>(lo) : -1;
    }

    static std::string read_file(const std::string& path) {
        std::ifstream f(path, std::ios::binary);
        if (!f) throw std::runtime_error("cannot read " + path);
        std::ostringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }
    // The line of text starting at ``at`` (without its newline), ``at`` moved past it; false at the end.
    static bool next_line(const std::string& text, size_t& at, std::string_view& line) {
        if (at >= text.size()) return false;
        size_t eol = text.find('\n', at);
        if (eol == std::string::npos) eol = text.size();
        line = std::string_view(text.data() + at, eol - at);
        at = eol + 1;
        return true;
    }

    static std::vector<std::string_view> split_ws(std::string_view s) {
        std::vector<std::string_view> out;
        size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
            size_t b = i;
            while (i < s.size() && !(s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
            if (i > b) out.push_back(s.substr(b, i - b));
        }
        return out;
    }
    // nltk: re.match(r"(.*?)(\([^()]*\))?$", name) -> the name without a trailing "(...)"
    static std::string_view strip_marker(std::string_view name) {
        if (name.empty() || name.back() != ')') return name;
        size_t open = name.rfind('(');
        if (open == std::string_view::npos) return name;
        std::string_view inner = name.substr(open + 1, name.size() - open - 2);
        if (inner.find(')') != std::string_view::npos) return name;
        return name.substr(0, open);
    }

    template <class T>
    static void put_vec(std::string& out, const std::vector<T>& v) {
        u64 n = v.size();
        out.append(reinterpret_cast<const char*>(&n), 8);
        out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    }
    template <class T>
    static void get_vec(const std::string& in, size_t& at, std::vector<T>& v) {
        if (at + 8 > in.size()) throw std::runtime_error("truncated WordNet index");
        u64 n;
        std::memcpy(&n, in.data() + at, 8);
        at += 8;
        if (n > (in.size() - at) / sizeof(T)) throw std::runtime_error("truncated WordNet index");
        v.resize(n);
        std::memcpy(v.data(), in.data() + at, n * sizeof(T));
        at += n * sizeof(T);
    }
    static void get_str(const std::string& in, size_t& at, std::string& s) {
        std::vector<char> v;
        get_vec(in, at, v);
        s.assign(v.begin(), v.end());
    }
    void write(const std::string& path) const {
        std::string out(WN_MAGIC, 8);
        put_vec(out, str_off_);
        put_vec(out, std::vector<char>(blob_.begin(), blob_.end()));
        put_vec(out, form_str_);
        put_vec(out, form_syn_begin_);
        put_vec(out, form_syn_);
        put_vec(out, syn_name_begin_);
        put_vec(out, syn_names_);
        for (int f = 0; f < 4; ++f) {
            put_vec(out, exc_key_[f]);
            put_vec(out, exc_val_begin_[f]);
            put_vec(out, exc_vals_[f]);
        }
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        if (!f) throw std::runtime_error("cannot write " + path);
        f.write(out.data(), static_cast<std::streamsize>(out.size()));
        if (!f) throw std::runtime_error("cannot write " + path);
    }

    std::vector<u32> str_off_;
    std::string blob_;
    std::vector<u32> form_str_;        // sorted forms
    std::vector<u32> form_syn_begin_;  // per form and pos (n, v, a, r): range into form_syn_
    std::vector<u32> form_syn_;
    std::vector<u32> syn_name_begin_;
    std::vector<u32> syn_names_;
    std::vector<u32> exc_key_[4], exc_val_begin_[4], exc_vals_[4];
};

}  // namespace tgm
