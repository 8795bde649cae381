// A little JSON for C tools: read the string fields of the input object (the host has
// already checked it against the tool's input schema) and write the output object.
#ifndef TOOL_JSON_H
#define TOOL_JSON_H

#include <stddef.h>
#include <stdint.h>

// Finds `key` in the top-level object `json` and decodes its string value (escapes
// included) into a new NUL-terminated heap buffer, `*out`, of `*out_len` bytes.
// Returns 1 when found, 0 when the key is absent, -1 when the text is not an object or
// the value is not a string, -2 when out of memory.
int json_get_string(const uint8_t *json, size_t len, const char *key, char **out, size_t *out_len);

// A growing output buffer. Every append returns 0, or -1 once an allocation failed (the
// buffer then stays failed, so check once at the end).
typedef struct {
    char *ptr;
    size_t len;
    size_t cap;
    int failed;
} json_buf;

int json_raw(json_buf *buf, const char *text);
int json_string(json_buf *buf, const char *text, size_t len);
int json_uint(json_buf *buf, uint64_t value);

#endif
