// A toolbox that keeps and breaks its own output schema: see ../README.md.

#include <stdlib.h>
#include <string.h>

#include "plugin.h"

static const char *VALUE_SCHEMA =
    "{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"number\"}},\"required\":[\"value\"],"
    "\"additionalProperties\":false}";

static void tool_info(exports_toolhost_tool_toolbox_tool_info_t *info, const char *name, const char *description) {
    // The host frees every returned string after the call (post-return): heap copies.
    plugin_string_dup(&info->name, name);
    plugin_string_dup(&info->description, description);
    plugin_string_dup(&info->input_schema, VALUE_SCHEMA);
    plugin_string_dup(&info->output_schema, VALUE_SCHEMA);
}

void exports_toolhost_tool_toolbox_list_tools(exports_toolhost_tool_toolbox_list_tool_info_t *ret) {
    ret->len = 2;
    ret->ptr = calloc(ret->len, sizeof *ret->ptr);
    if (!ret->ptr) abort();
    tool_info(&ret->ptr[0], "echo", "Returns its input unchanged.");
    tool_info(&ret->ptr[1], "breaks_its_schema", "Declares a number as its output value, then returns a string.");
}

bool exports_toolhost_tool_toolbox_call(plugin_string_t *tool, plugin_string_t *input, plugin_string_t *ret,
                                        exports_toolhost_tool_toolbox_tool_error_t *err) {
    (void)err;
    if (tool->len == 4 && memcmp(tool->ptr, "echo", 4) == 0) {
        // The input becomes the output: ownership passes to the result.
        *ret = *input;
    } else {
        plugin_string_dup(ret, "{\"value\":\"not a number\"}");
        plugin_string_free(input);
    }
    plugin_string_free(tool);
    return true;
}
