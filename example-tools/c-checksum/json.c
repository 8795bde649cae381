#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t skip_ws(const uint8_t *s, size_t len, size_t i) {
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

static int hex_value(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_u16(const uint8_t *s, size_t len, size_t i, uint32_t *out) {
    if (i + 4 > len) return -1;
    uint32_t value = 0;
    for (size_t k = 0; k < 4; k++) {
        int digit = hex_value(s[i + k]);
        if (digit < 0) return -1;
        value = value << 4 | (uint32_t)digit;
    }
    *out = value;
    return 0;
}

static size_t put_utf8(char *out, uint32_t cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | (cp >> 6 & 0x3F)); out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

// Parses the string starting at s[i] == '"'. With `out` NULL it only finds the end.
// Returns the index after the closing quote, or 0 on malformed text.
static size_t parse_string(const uint8_t *s, size_t len, size_t i, char *out, size_t *out_len) {
    size_t n = 0;
    if (i >= len || s[i] != '"') return 0;
    i++;
    while (i < len && s[i] != '"') {
        if (s[i] != '\\') {
            if (out) out[n] = (char)s[i];
            n++;
            i++;
            continue;
        }
        if (++i >= len) return 0;
        uint8_t c = s[i++];
        char simple = 0;
        switch (c) {
            case '"': simple = '"'; break;
            case '\\': simple = '\\'; break;
            case '/': simple = '/'; break;
            case 'b': simple = '\b'; break;
            case 'f': simple = '\f'; break;
            case 'n': simple = '\n'; break;
            case 'r': simple = '\r'; break;
            case 't': simple = '\t'; break;
            case 'u': {
                uint32_t cp;
                if (read_u16(s, len, i, &cp)) return 0;
                i += 4;
                if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= len && s[i] == '\\' && s[i + 1] == 'u') {
                    uint32_t low;
                    if (!read_u16(s, len, i + 2, &low) && low >= 0xDC00 && low < 0xE000) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        i += 6;
                    }
                }
                char utf8[4];
                size_t k = put_utf8(utf8, cp);
                if (out) memcpy(out + n, utf8, k);
                n += k;
                continue;
            }
            default: return 0;
        }
        if (out) out[n] = simple;
        n++;
    }
    if (i >= len) return 0;
    if (out_len) *out_len = n;
    return i + 1;
}

// Skips any JSON value; returns the index after it, or 0 on malformed text.
static size_t skip_value(const uint8_t *s, size_t len, size_t i) {
    i = skip_ws(s, len, i);
    if (i >= len) return 0;
    if (s[i] == '"') return parse_string(s, len, i, NULL, NULL);
    if (s[i] == '{' || s[i] == '[') {
        int depth = 0;
        while (i < len) {
            if (s[i] == '"') {
                i = parse_string(s, len, i, NULL, NULL);
                if (!i) return 0;
                continue;
            }
            if (s[i] == '{' || s[i] == '[') depth++;
            if (s[i] == '}' || s[i] == ']') {
                if (--depth == 0) return i + 1;
            }
            i++;
        }
        return 0;
    }
    while (i < len && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' && s[i] != '\t' &&
           s[i] != '\r')
        i++;
    return i;
}

int json_get_string(const uint8_t *s, size_t len, const char *key, char **out, size_t *out_len) {
    size_t i = skip_ws(s, len, 0);
    if (i >= len || s[i] != '{') return -1;
    i = skip_ws(s, len, i + 1);
    if (i < len && s[i] == '}') return 0;
    size_t key_len = strlen(key);
    while (i < len) {
        size_t name_len = 0;
        size_t name_start = i + 1;
        size_t after = parse_string(s, len, i, NULL, &name_len);
        if (!after) return -1;
        // Keys with escapes never match: ours are plain ASCII.
        int match = after - name_start - 1 == key_len && memcmp(s + name_start, key, key_len) == 0;
        i = skip_ws(s, len, after);
        if (i >= len || s[i] != ':') return -1;
        i = skip_ws(s, len, i + 1);
        if (match) {
            if (i >= len || s[i] != '"') return -1;
            size_t n = 0;
            if (!parse_string(s, len, i, NULL, &n)) return -1;
            char *value = malloc(n + 1);
            if (!value) return -2;
            parse_string(s, len, i, value, NULL);
            value[n] = 0;
            *out = value;
            *out_len = n;
            return 1;
        }
        i = skip_value(s, len, i);
        if (!i) return -1;
        i = skip_ws(s, len, i);
        if (i < len && s[i] == ',') {
            i = skip_ws(s, len, i + 1);
            continue;
        }
        return i < len && s[i] == '}' ? 0 : -1;
    }
    return -1;
}

static int reserve(json_buf *buf, size_t more) {
    if (buf->failed) return -1;
    if (buf->len + more + 1 <= buf->cap) return 0;
    size_t cap = buf->cap ? buf->cap : 64;
    while (cap < buf->len + more + 1) cap *= 2;
    char *grown = realloc(buf->ptr, cap);
    if (!grown) {
        buf->failed = 1;
        return -1;
    }
    buf->ptr = grown;
    buf->cap = cap;
    return 0;
}

static int append(json_buf *buf, const char *bytes, size_t n) {
    if (reserve(buf, n)) return -1;
    memcpy(buf->ptr + buf->len, bytes, n);
    buf->len += n;
    buf->ptr[buf->len] = 0;
    return 0;
}

int json_raw(json_buf *buf, const char *text) { return append(buf, text, strlen(text)); }

int json_string(json_buf *buf, const char *text, size_t len) {
    static const char hex[] = "0123456789abcdef";
    if (append(buf, "\"", 1)) return -1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') {
            char escaped[2] = {'\\', (char)c};
            if (append(buf, escaped, 2)) return -1;
        } else if (c < 0x20) {
            char escaped[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            if (append(buf, escaped, 6)) return -1;
        } else if (append(buf, (const char *)&c, 1)) {
            return -1;
        }
    }
    return append(buf, "\"", 1);
}

int json_uint(json_buf *buf, uint64_t value) {
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
    return append(buf, digits, (size_t)n);
}
