// {{name}}: a toolhost toolbox in C.
//
// `plugin.h` is generated from wit/tool.wit by the build. `list_tools` names the tools
// with their JSON Schemas; `call` gets the input as JSON text (already checked against
// the input schema by the host) and returns the output as JSON text, or a `tool-error`:
// TOOLHOST_TOOL_TYPES_TOOL_ERROR_INVALID_INPUT when the input fits the schema but makes
// no sense, TOOLHOST_TOOL_TYPES_TOOL_ERROR_FAILED when the tool tried and could not do it.
//
// Memory: the arguments belong to `call` (free them); every string returned must be on
// the heap, because the host frees it after the call ("post-return").

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "plugin.h"

#define GREET_INPUT                                                                                  \
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","              \
    "\"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,"               \
    "\"description\":\"Who to greet.\"}},\"required\":[\"name\"],\"additionalProperties\":false}"

#define GREET_OUTPUT                                                                                 \
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","              \
    "\"properties\":{\"greeting\":{\"type\":\"string\"}},\"required\":[\"greeting\"],"                \
    "\"additionalProperties\":false}"

void exports_toolhost_tool_toolbox_list_tools(exports_toolhost_tool_toolbox_list_tool_info_t *ret) {
    ret->len = 1;
    ret->ptr = calloc(ret->len, sizeof *ret->ptr);
    if (!ret->ptr) abort();
    plugin_string_dup(&ret->ptr[0].name, "greet");
    plugin_string_dup(&ret->ptr[0].description, "Greets someone by name. Replace it with your first real tool.");
    plugin_string_dup(&ret->ptr[0].input_schema, GREET_INPUT);
    plugin_string_dup(&ret->ptr[0].output_schema, GREET_OUTPUT);
}

static bool tool_error(exports_toolhost_tool_toolbox_tool_error_t *err, uint8_t tag, const char *message) {
    err->tag = tag;
    // Both variants hold one string at the same place; a heap copy, freed by the host.
    plugin_string_dup(&err->val.failed, message);
    return false;
}

static bool greet(const plugin_string_t *input, plugin_string_t *ret, exports_toolhost_tool_toolbox_tool_error_t *err) {
    char *name = NULL;
    size_t len = 0;
    int found = json_get_string(input->ptr, input->len, "name", &name, &len);
    if (found == -2) return tool_error(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_FAILED, "out of memory");
    if (found != 1) return tool_error(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_INVALID_INPUT, "`name` must be a string");
    size_t start = 0;
    while (start < len && (name[start] == ' ' || name[start] == '\t' || name[start] == '\n')) start++;
    while (len > start && (name[len - 1] == ' ' || name[len - 1] == '\t' || name[len - 1] == '\n')) len--;
    if (start == len) {
        free(name);
        return tool_error(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_INVALID_INPUT, "`name` is blank");
    }

    size_t n = len - start;
    char *greeting = malloc(n + 8);  // "Hello, " + name + "!"
    json_buf out = {0};
    out.failed = greeting == NULL;
    if (greeting) {
        memcpy(greeting, "Hello, ", 7);
        memcpy(greeting + 7, name + start, n);
        greeting[7 + n] = '!';
        json_raw(&out, "{\"greeting\":");
        json_string(&out, greeting, n + 8);  // quoted and escaped
        json_raw(&out, "}");
        free(greeting);
    }
    free(name);
    if (out.failed) {
        free(out.ptr);
        return tool_error(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_FAILED, "out of memory");
    }
    plugin_string_t message;
    plugin_string_set(&message, "greeted someone");
    toolhost_tool_host_log(TOOLHOST_TOOL_HOST_LOG_LEVEL_INFO, &message);
    ret->ptr = (uint8_t *)out.ptr;  // already on the heap: the host frees it
    ret->len = out.len;
    return true;
}

bool exports_toolhost_tool_toolbox_call(plugin_string_t *tool, plugin_string_t *input, plugin_string_t *ret,
                                        exports_toolhost_tool_toolbox_tool_error_t *err) {
    bool ok;
    if (tool->len == 5 && memcmp(tool->ptr, "greet", 5) == 0) {
        ok = greet(input, ret, err);
    } else {
        ok = tool_error(err, TOOLHOST_TOOL_TYPES_TOOL_ERROR_FAILED, "no such tool");
    }
    plugin_string_free(tool);
    plugin_string_free(input);
    return ok;
}
