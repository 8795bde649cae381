// c_checksum: checksums and digests of text, hex or base64 data, so that an agent can
// verify a download, compare two payloads or compute a cache key without guessing.
//
// The host checks every input against the schemas below before `call` runs; this code
// still refuses input that fits the schema but makes no sense (odd-length hex, broken
// base64) with `invalid-input`, and reports running out of memory as `failed`.

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "plugin.h"

#define INPUT_SCHEMA                                                                                  \
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","               \
    "\"properties\":{"                                                                                \
    "\"data\":{\"type\":\"string\",\"maxLength\":4194304,"                                            \
    "\"description\":\"The bytes to checksum, spelled in `encoding`.\"},"                            \
    "\"encoding\":{\"type\":\"string\",\"enum\":[\"utf8\",\"hex\",\"base64\"],\"default\":\"utf8\","  \
    "\"description\":\"How `data` spells the bytes: UTF-8 text (the default), hexadecimal digits, "   \
    "or standard base64 (padding optional).\"}},"                                                     \
    "\"required\":[\"data\"],\"additionalProperties\":false}"

#define OUTPUT_SCHEMA_32(BITS_NOTE)                                                                   \
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","               \
    "\"properties\":{"                                                                                \
    "\"value\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295,"                           \
    "\"description\":\"The checksum as an unsigned 32-bit number.\"},"                               \
    "\"hex\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{8}$\","                                     \
    "\"description\":\"The checksum as 8 lowercase hex digits" BITS_NOTE ".\"},"                      \
    "\"bytes\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"How many bytes were read.\"}},"  \
    "\"required\":[\"value\",\"hex\",\"bytes\"],\"additionalProperties\":false}"

#define SHA256_OUTPUT_SCHEMA                                                                          \
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","               \
    "\"properties\":{"                                                                                \
    "\"hex\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{64}$\","                                    \
    "\"description\":\"The digest as 64 lowercase hex digits.\"},"                                   \
    "\"bytes\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"How many bytes were read.\"}},"  \
    "\"required\":[\"hex\",\"bytes\"],\"additionalProperties\":false}"

// ---- the algorithms ----------------------------------------------------------------

static uint32_t crc32(const uint8_t *data, size_t len) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < len; i++) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static uint32_t adler32(const uint8_t *data, size_t len) {
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < len; i++) {
        a = (a + data[i]) % 65521u;
        b = (b + a) % 65521u;
    }
    return b << 16 | a;
}

static const uint32_t SHA256_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROTR(x, n) ((x) >> (n) | (x) << (32 - (n)))

static void sha256_block(uint32_t state[8], const uint8_t block[64]) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 | (uint32_t)block[4 * i + 2] << 8 |
               block[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROTR(w[i - 15], 7) ^ ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROTR(w[i - 2], 17) ^ ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROTR(e, 6) ^ ROTR(e, 11) ^ ROTR(e, 25)) + ((e & f) ^ (~e & g)) + SHA256_K[i] + w[i];
        uint32_t t2 = (ROTR(a, 2) ^ ROTR(a, 13) ^ ROTR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    state[0] += a; state[1] += b; state[2] += c; state[3] += d;
    state[4] += e; state[5] += f; state[6] += g; state[7] += h;
}

static void sha256(const uint8_t *data, size_t len, uint8_t digest[32]) {
    uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t full = len / 64 * 64;
    for (size_t i = 0; i < full; i += 64) sha256_block(state, data + i);
    uint8_t tail[128] = {0};
    size_t rest = len - full;
    memcpy(tail, data + full, rest);
    tail[rest] = 0x80;
    size_t tail_len = rest + 9 <= 64 ? 64 : 128;
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
    for (size_t i = 0; i < tail_len; i += 64) sha256_block(state, tail + i);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)state[i];
    }
}

// ---- decoding the data ---------------------------------------------------------------

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int base64_digit(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Decodes `text` in place (every encoding is at least as long as its bytes). Returns
// NULL on success or the reason the text is not valid in that encoding.
static const char *decode(char *text, size_t *len, const char *encoding) {
    if (strcmp(encoding, "utf8") == 0) return NULL;
    if (strcmp(encoding, "hex") == 0) {
        if (*len % 2) return "hex data must have an even number of digits";
        for (size_t i = 0; i < *len; i += 2) {
            int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
            if (hi < 0 || lo < 0) return "hex data may only contain the digits 0-9 and a-f";
            text[i / 2] = (char)(hi << 4 | lo);
        }
        *len /= 2;
        return NULL;
    }
    if (strcmp(encoding, "base64") == 0) {
        size_t n = *len;
        while (n > 0 && text[n - 1] == '=') n--;
        if (*len - n > 2) return "base64 data has more than two `=` of padding";
        if (n % 4 == 1) return "base64 data has a stray final character";
        uint32_t acc = 0;
        int bits = 0;
        size_t out = 0;
        for (size_t i = 0; i < n; i++) {
            int digit = base64_digit(text[i]);
            if (digit < 0) return "base64 data may only contain A-Z, a-z, 0-9, `+`, `/` and final `=`";
            acc = acc << 6 | (uint32_t)digit;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                text[out++] = (char)(acc >> bits & 0xFF);
            }
        }
        *len = out;
        return NULL;
    }
    return "unknown encoding";
}

// ---- the toolbox ---------------------------------------------------------------------

static void tool_info(exports_toolhost_tool_toolbox_tool_info_t *info, const char *name, const char *description,
                      const char *input_schema, const char *output_schema) {
    // The host frees every returned string after the call (post-return): heap copies.
    plugin_string_dup(&info->name, name);
    plugin_string_dup(&info->description, description);
    plugin_string_dup(&info->input_schema, input_schema);
    plugin_string_dup(&info->output_schema, output_schema);
}

void exports_toolhost_tool_toolbox_list_tools(exports_toolhost_tool_toolbox_list_tool_info_t *ret) {
    ret->len = 3;
    ret->ptr = calloc(ret->len, sizeof *ret->ptr);
    if (!ret->ptr) abort();
    tool_info(&ret->ptr[0], "crc32",
              "CRC-32 (IEEE 802.3: the checksum of zip, gzip and PNG) of some data given as UTF-8 text, hex or "
              "base64.",
              INPUT_SCHEMA, OUTPUT_SCHEMA_32(", as zip and `crc32` print it"));
    tool_info(&ret->ptr[1], "adler32",
              "Adler-32 (the checksum of zlib streams) of some data given as UTF-8 text, hex or base64.",
              INPUT_SCHEMA, OUTPUT_SCHEMA_32(""));
    tool_info(&ret->ptr[2], "sha256",
              "SHA-256 digest of some data given as UTF-8 text, hex or base64, as `sha256sum` prints it.",
              INPUT_SCHEMA, SHA256_OUTPUT_SCHEMA);
}

static bool fail(exports_toolhost_tool_toolbox_tool_error_t *err, uint8_t tag, const char *message) {
    err->tag = tag;
    plugin_string_dup(tag == TOOLHOST_TOOL_TYPES_TOOL_ERROR_FAILED ? &err->val.failed : &err->val.invalid_input,
                      message);
    return false;
}

static bool out_of_memory(exports_toolhost_tool_toolbox_tool_error_t *err) {
    return fail(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_FAILED, "out of memory");
}

static bool run(const char *tool, const plugin_string_t *input, plugin_string_t *ret,
                exports_toolhost_tool_toolbox_tool_error_t *err) {
    char *data = NULL, *encoding = NULL;
    size_t len = 0, encoding_len = 0;
    int found = json_get_string(input->ptr, input->len, "data", &data, &len);
    if (found == -2) return out_of_memory(err);
    if (found != 1) return fail(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_INVALID_INPUT, "`data` must be a string");
    found = json_get_string(input->ptr, input->len, "encoding", &encoding, &encoding_len);
    if (found == -2) {
        free(data);
        return out_of_memory(err);
    }
    const char *problem = decode(data, &len, found == 1 ? encoding : "utf8");
    free(encoding);
    if (problem) {
        free(data);
        return fail(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_INVALID_INPUT, problem);
    }

    static const char hex[] = "0123456789abcdef";
    char digits[65];
    json_buf out = {0};
    const uint8_t *bytes = (const uint8_t *)data;
    if (strcmp(tool, "sha256") == 0) {
        uint8_t digest[32];
        sha256(bytes, len, digest);
        for (int i = 0; i < 32; i++) {
            digits[2 * i] = hex[digest[i] >> 4];
            digits[2 * i + 1] = hex[digest[i] & 15];
        }
        json_raw(&out, "{\"hex\":");
        json_string(&out, digits, 64);
    } else {
        uint32_t value = strcmp(tool, "crc32") == 0 ? crc32(bytes, len) : adler32(bytes, len);
        for (int i = 0; i < 8; i++) digits[i] = hex[value >> (28 - 4 * i) & 15];
        json_raw(&out, "{\"value\":");
        json_uint(&out, value);
        json_raw(&out, ",\"hex\":");
        json_string(&out, digits, 8);
    }
    json_raw(&out, ",\"bytes\":");
    json_uint(&out, len);
    json_raw(&out, "}");
    free(data);
    if (out.failed) {
        free(out.ptr);
        return out_of_memory(err);
    }
    // The buffer is already on the heap: hand it over, the host frees it after the call.
    ret->ptr = (uint8_t *)out.ptr;
    ret->len = out.len;
    return true;
}

bool exports_toolhost_tool_toolbox_call(plugin_string_t *tool, plugin_string_t *input, plugin_string_t *ret,
                                        exports_toolhost_tool_toolbox_tool_error_t *err) {
    // The arguments belong to this function: copy the tool name to a C string, free both.
    char name[16] = {0};
    if (tool->len < sizeof name) memcpy(name, tool->ptr, tool->len);
    bool ok;
    if (strcmp(name, "crc32") == 0 || strcmp(name, "adler32") == 0 || strcmp(name, "sha256") == 0) {
        ok = run(name, input, ret, err);
    } else {
        ok = fail(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_FAILED, "no such tool in this toolbox");
    }
    plugin_string_free(tool);
    plugin_string_free(input);
    return ok;
}
