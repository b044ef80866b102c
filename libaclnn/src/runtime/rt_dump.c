/*
 * rt_dump.c - dumps: aclmdlInitDump / aclmdlSetDump / aclmdlFinalizeDump, the "dump" section of
 * aclInit's configuration, acldumpGetPath, and aclopStartDumpArgs / aclopStopDumpArgs.
 *
 * This file holds the configuration; the executor (exec/launch_dump.c) writes the files when a
 * launch runs.  A configuration is checked as CANN's adump checks it (runtime:src/dfx/adump/
 * adump/impl/dump_config_converter.cpp): field types, enumerated values, dump_path (present, not
 * empty, at most 512 characters, an existing readable and writable directory), dump_list items,
 * dump_stats against dump_data; any failure is ACL_ERROR_INVALID_DUMP_CONFIG with the field named
 * in aclGetRecentErrMsg.  A configuration that asks for nothing (no "dump", an empty one,
 * dump_op_switch off and no dump_list) succeeds and changes nothing, as CANN's NeedDump.
 *
 * What a CPU honours: the single-operator data dump (dump_op_switch "on"; dump_mode input /
 * output / all; dump_data tensor or stats) of every aclnn launch, aclopStartDumpArgs's
 * operator descriptions, and the exception dumps' directory for a program's own data.  dump_list
 * names layers of offline models, which libaclnn does not load, so it selects no aclnn launch;
 * exception scenes (dump_scene) and overflow dumps (dump_debug) are accepted and write nothing.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acl/acl_dump.h"
#include "base/nn_json.h"
#include "runtime/nn_rt_internal.h"

#define NN_DUMP_CONFIG_MAX_BYTES (10L << 20) /* CANN's MAX_CONFIG_FILE_BYTE */
#define NN_DUMP_CONFIG_MAX_DEPTH 10          /* CANN's MAX_CONFIG_OBJ_DEPTH / _ARRAY_DEPTH */
#define NN_DUMP_PATH_LIMIT 512               /* CANN's MAX_DUMP_PATH_LENGTH */

_Atomic unsigned nn_dump_switch;

/* What a successful configuration asks for. */
typedef struct {
    bool data;       /* single-operator data dump: dump_op_switch "on", no exception scene */
    bool inputs;     /* dump_mode "input" or "all" */
    bool outputs;    /* dump_mode "output" (the default) or "all" */
    unsigned stats;  /* dump_data "stats": the NN_DUMP_STAT_* items to write; 0: tensors */
    bool exception;  /* dump_scene names an exception dump (its dump_path is not checked) */
    char path[NN_DUMP_PATH_LIMIT + 1]; /* dump_path as written (acldumpGetPath returns it) */
} dump_config;

static pthread_mutex_t g_dump_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_init_dump;          /* aclmdlInitDump called, aclmdlFinalizeDump not yet */
static bool g_configured;         /* a configuration asked for a dump (g_config holds it) */
static dump_config g_config;
static int32_t (*g_callback)(const acldumpChunk *, int32_t); /* acldumpRegCallback */
static bool g_args_on;            /* aclopStartDumpArgs */
static char g_args_path[PATH_MAX];
static _Atomic uint64_t g_launches; /* numbers the dumped launches of the process */

/* Caller holds g_dump_lock: publishes what launches must look at. */
static void publish_switch_locked(void)
{
    unsigned on = (g_configured && g_config.data ? NN_DUMP_DATA : 0u) | (g_args_on ? NN_DUMP_ARGS : 0u);
    atomic_store_explicit(&nn_dump_switch, on, memory_order_relaxed);
}

/* Installs a configuration (NULL: the data dump ends; `end_session` also ends aclmdlInitDump's
 * session). */
static void install_config(const dump_config *config, bool end_session)
{
    pthread_mutex_lock(&g_dump_lock);
    g_configured = config != NULL;
    if (config != NULL)
        g_config = *config;
    if (end_session)
        g_init_dump = false;
    publish_switch_locked();
    pthread_mutex_unlock(&g_dump_lock);
}

/* ---- the configuration file ----------------------------------------------------------------- */

/* The deepest object and array nesting of the text, outside strings (CANN counts it before
 * parsing and refuses more than 10 of either with ACL_ERROR_PARSE_FILE). */
static void nesting_depth(const char *text, size_t length, int *objects, int *arrays)
{
    int object_depth = 0, array_depth = 0;
    bool in_string = false;
    *objects = *arrays = 0;
    for (size_t i = 0; i < length; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '{' && ++object_depth > *objects)
            *objects = object_depth;
        else if (c == '[' && ++array_depth > *arrays)
            *arrays = array_depth;
        else if (c == '}')
            object_depth--;
        else if (c == ']')
            array_depth--;
    }
}

/* Reads a configuration file whole: *text is NULL (success) for an empty file. */
static aclError read_config_file(const char *api, const char *path, char **text, size_t *length)
{
    *text = NULL;
    *length = 0;
    struct stat st;
    if (stat(path, &st) != 0)
        return nn_rt_error(ACL_ERROR_INVALID_FILE, "%s: config file \"%s\" cannot be read (%s).", api,
                           path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return nn_rt_error(ACL_ERROR_INVALID_FILE, "%s: config file \"%s\" is not a regular file.", api, path);
    if (st.st_size > NN_DUMP_CONFIG_MAX_BYTES)
        return nn_rt_error(ACL_ERROR_INVALID_FILE, "%s: config file \"%s\" has %lld bytes, more than "
                           "the %ld allowed.", api, path, (long long)st.st_size, NN_DUMP_CONFIG_MAX_BYTES);
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_FILE, "%s: config file \"%s\" cannot be opened for reading "
                           "(%s).", api, path, strerror(errno));
    char *buffer = malloc((size_t)st.st_size + 1);
    size_t got = buffer ? fread(buffer, 1, (size_t)st.st_size, file) : 0;
    fclose(file);
    if (buffer == NULL)
        return nn_rt_error(ACL_ERROR_BAD_ALLOC, "%s: out of memory reading \"%s\".", api, path);
    buffer[got] = '\0';
    int objects, arrays;
    nesting_depth(buffer, got, &objects, &arrays);
    if (objects > NN_DUMP_CONFIG_MAX_DEPTH || arrays > NN_DUMP_CONFIG_MAX_DEPTH) {
        free(buffer);
        return nn_rt_error(ACL_ERROR_PARSE_FILE, "%s: config file \"%s\" nests objects %d and arrays "
                           "%d deep; at most %d of each are accepted.", api, path, objects, arrays,
                           NN_DUMP_CONFIG_MAX_DEPTH);
    }
    if (got == 0) {
        free(buffer);
        return ACL_SUCCESS;
    }
    *text = buffer;
    *length = got;
    return ACL_SUCCESS;
}

static aclError bad_config(const char *api, const char *file, const char *fmt, const char *field,
                           const char *detail)
{
    char what[640];
    snprintf(what, sizeof what, fmt, field, detail);
    return nn_rt_error(ACL_ERROR_INVALID_DUMP_CONFIG, "%s: invalid dump config in \"%s\": %s.", api,
                       file, what);
}

/* The string member `key` of `object`: NULL when absent; *ok false when present but no string. */
static const char *string_member(const nn_json *object, const char *key, bool *ok)
{
    const nn_json *value = nn_json_member(object, key);
    *ok = value == NULL || value->type == NN_JSON_STRING;
    return value != NULL && value->type == NN_JSON_STRING ? value->string : NULL;
}

/* Whether `value` is one of the '/'-separated words in `allowed`. */
static bool one_of(const char *value, const char *allowed)
{
    size_t n = strlen(value);
    for (const char *p = allowed; *p;) {
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, value, n) == 0)
            return true;
        p += len + (end ? 1 : 0);
    }
    return false;
}

typedef struct {
    const char *key;
    const char *allowed; /* '/'-separated values, or NULL for any string */
} string_field;

static const string_field k_string_fields[] = {
    {"dump_path", NULL},
    {"dump_mode", "input/output/all"},
    {"dump_op_switch", "on/off"},
    {"dump_level", "op/kernel/all"},
    {"dump_scene", "lite_exception/aic_err_brief_dump/aic_err_norm_dump/aic_err_detail_dump/watcher"},
    {"dump_data", "tensor/stats"},
    {"dump_debug", "on/off"},
    {"dump_kernel_data", NULL},
    {"dump_step", NULL},
};

static aclError check_string_fields(const char *api, const char *file, const nn_json *dump)
{
    for (size_t i = 0; i < sizeof k_string_fields / sizeof k_string_fields[0]; i++) {
        const string_field *field = &k_string_fields[i];
        bool ok;
        const char *value = string_member(dump, field->key, &ok);
        if (!ok)
            return bad_config(api, file, "%s must be a string%s", field->key, "");
        if (value == NULL || field->allowed == NULL)
            continue;
        if (value[0] == '\0')
            return bad_config(api, file, "%s must not be empty%s", field->key, "");
        if (!one_of(value, field->allowed)) {
            char detail[256];
            snprintf(detail, sizeof detail, " (one of %s), got \"%.64s\"", field->allowed, value);
            return bad_config(api, file, "%s has an invalid value%s", field->key, detail);
        }
    }
    return ACL_SUCCESS;
}

/* dump_list: an array of objects; with dump_op_switch off, a model_name or layer that is given
 * must not be empty (CheckModelNameAndLayer). */
static aclError check_dump_list(const char *api, const char *file, const nn_json *dump, bool switch_off)
{
    const nn_json *list = nn_json_member(dump, "dump_list");
    if (list == NULL)
        return ACL_SUCCESS;
    if (list->type != NN_JSON_ARRAY)
        return bad_config(api, file, "%s must be an array, got %s", "dump_list", nn_json_type_name(list->type));
    for (size_t i = 0; i < list->count; i++) {
        const nn_json *item = &list->children[i];
        char where[64];
        snprintf(where, sizeof where, "dump_list[%zu]", i);
        if (item->type != NN_JSON_OBJECT)
            return bad_config(api, file, "%s must be an object, got %s", where, nn_json_type_name(item->type));
        bool ok;
        const char *model = string_member(item, "model_name", &ok);
        if (!ok)
            return bad_config(api, file, "%s.model_name must be a string%s", where, "");
        const nn_json *layer = nn_json_member(item, "layer");
        if (layer != NULL && layer->type != NN_JSON_ARRAY)
            return bad_config(api, file, "%s.layer must be an array of strings%s", where, "");
        for (size_t j = 0; layer != NULL && j < layer->count; j++)
            if (layer->children[j].type != NN_JSON_STRING)
                return bad_config(api, file, "%s.layer must be an array of strings%s", where, "");
        if (switch_off && model != NULL && model[0] == '\0')
            return bad_config(api, file, "%s.model_name must not be empty%s", where, "");
        if (switch_off && layer != NULL && layer->count == 0)
            return bad_config(api, file, "%s.layer must not be empty%s", where, "");
    }
    return ACL_SUCCESS;
}

/* dump_stats: an array of known item names, not empty, and only with dump_data "stats"
 * (CheckDumpFieldTypes, CheckDumpFieldValues, CheckDumpStats).  *items gets the selection: the
 * six of CANN's default (all but L2norm) when dump_stats is absent. */
static aclError check_dump_stats(const char *api, const char *file, const nn_json *dump, unsigned *items)
{
    static const char *const names[] = {"Max", "Min", "Avg", "Nan", "Negative Inf", "Positive Inf", "L2norm"};
    const nn_json *stats = nn_json_member(dump, "dump_stats");
    *items = NN_DUMP_STAT_DEFAULT;
    if (stats == NULL)
        return ACL_SUCCESS;
    if (stats->type != NN_JSON_ARRAY)
        return bad_config(api, file, "%s must be an array of strings, got %s", "dump_stats",
                          nn_json_type_name(stats->type));
    *items = 0;
    for (size_t i = 0; i < stats->count; i++) {
        const nn_json *item = &stats->children[i];
        unsigned bit = 0;
        for (unsigned k = 0; item->type == NN_JSON_STRING && k < sizeof names / sizeof names[0]; k++)
            if (strcmp(item->string, names[k]) == 0)
                bit = 1u << k;
        if (bit == 0)
            return bad_config(api, file, "%s items must be Max, Min, Avg, Nan, Negative Inf, Positive Inf or "
                              "L2norm%s", "dump_stats", "");
        *items |= bit;
    }
    if (*items == 0)
        return bad_config(api, file, "%s must not be empty%s", "dump_stats", "");
    bool ok;
    const char *data = string_member(dump, "dump_data", &ok);
    if (data == NULL || strcmp(data, "tensor") == 0)
        return bad_config(api, file, "%s cannot be set when dump_data is \"tensor\" (the default)%s",
                          "dump_stats", "");
    return ACL_SUCCESS;
}

/* dump_path: present, not empty, at most 512 characters, an existing directory the process may
 * read and write (CheckDumpPath; an "ip:path" remote target is not something a CPU reaches). */
static aclError check_dump_path(const char *api, const char *file, const char *path)
{
    if (path == NULL)
        return bad_config(api, file, "%s is required%s", "dump_path", "");
    if (path[0] == '\0')
        return bad_config(api, file, "%s must not be empty%s", "dump_path", "");
    if (strlen(path) > NN_DUMP_PATH_LIMIT)
        return bad_config(api, file, "%s is longer than 512 characters%s", "dump_path", "");
    struct stat st;
    char detail[600];
    snprintf(detail, sizeof detail, " (\"%.512s\")", path);
    if (stat(path, &st) != 0)
        return bad_config(api, file, "%s does not exist%s", "dump_path", detail);
    if (!S_ISDIR(st.st_mode))
        return bad_config(api, file, "%s is not a directory%s", "dump_path", detail);
    if (access(path, R_OK | W_OK) != 0)
        return bad_config(api, file, "%s is not readable and writable%s", "dump_path", detail);
    return ACL_SUCCESS;
}

/* Checks the "dump" section of `root` and fills *out; *wanted says whether it asks for a dump
 * at all (CANN's NeedDump). */
static aclError parse_dump_section(const char *api, const char *file, const nn_json *root,
                                   dump_config *out, bool *wanted)
{
    *wanted = false;
    memset(out, 0, sizeof *out);
    const nn_json *dump = nn_json_member(root, "dump");
    if (dump == NULL)
        return ACL_SUCCESS;
    if (dump->type != NN_JSON_OBJECT)
        return bad_config(api, file, "%s must be an object, got %s", "dump", nn_json_type_name(dump->type));
    if (dump->count == 0)
        return ACL_SUCCESS;
    aclError ret = check_string_fields(api, file, dump);
    if (ret != ACL_SUCCESS)
        return ret;
    bool ok;
    const char *scene = string_member(dump, "dump_scene", &ok);
    const char *op_switch = string_member(dump, "dump_op_switch", &ok);
    const char *debug = string_member(dump, "dump_debug", &ok);
    const char *mode = string_member(dump, "dump_mode", &ok);
    bool switch_on = op_switch != NULL && strcmp(op_switch, "on") == 0;
    bool debug_on = debug != NULL && strcmp(debug, "on") == 0;
    bool exception_scene = scene != NULL && strcmp(scene, "watcher") != 0;
    if (scene != NULL && (switch_on || debug_on))
        return bad_config(api, file, "%s cannot be \"on\" when dump_scene is set%s",
                          switch_on ? "dump_op_switch" : "dump_debug", "");
    if (scene != NULL && !exception_scene && mode != NULL && strcmp(mode, "output") != 0)
        return bad_config(api, file, "%s must be \"output\" when dump_scene is \"watcher\"%s", "dump_mode", "");
    if (debug_on && switch_on)
        return bad_config(api, file, "%s cannot be \"on\" when dump_debug is \"on\"%s", "dump_op_switch", "");
    const char *path = string_member(dump, "dump_path", &ok);
    if (!exception_scene && (ret = check_dump_path(api, file, path)) != ACL_SUCCESS)
        return ret;
    snprintf(out->path, sizeof out->path, "%s", path ? path : "");
    out->exception = exception_scene;
    if (!exception_scene && !debug_on && (ret = check_dump_list(api, file, dump, !switch_on)) != ACL_SUCCESS)
        return ret;
    unsigned stats_items = 0;
    if (!exception_scene && !debug_on && (ret = check_dump_stats(api, file, dump, &stats_items)) != ACL_SUCCESS)
        return ret;
    const char *data = string_member(dump, "dump_data", &ok);
    out->stats = data != NULL && strcmp(data, "stats") == 0 ? stats_items : 0;
    const nn_json *list = nn_json_member(dump, "dump_list");
    *wanted = (list != NULL && list->count > 0) || switch_on || debug_on || scene != NULL;
    out->data = switch_on && scene == NULL;
    out->inputs = mode != NULL && (strcmp(mode, "input") == 0 || strcmp(mode, "all") == 0);
    out->outputs = mode == NULL || strcmp(mode, "output") == 0 || strcmp(mode, "all") == 0;
    return ACL_SUCCESS;
}

/* Reads, parses and checks a configuration file; on success installs it when it asks for a
 * dump.  `parse_code` is what an unparsable text returns (aclInit: ACL_ERROR_PARSE_FILE, as
 * its own parse of the file fails first; aclmdlSetDump: ACL_ERROR_INVALID_DUMP_CONFIG). */
static aclError apply_config_file(const char *api, const char *path, aclError parse_code)
{
    char *text = NULL;
    size_t length = 0;
    aclError ret = read_config_file(api, path, &text, &length);
    if (ret != ACL_SUCCESS || text == NULL)
        return ret;
    char why[256];
    nn_json *root = nn_json_parse(text, length, why, sizeof why);
    free(text);
    if (root == NULL)
        return nn_rt_error(parse_code, "%s: config file \"%s\" is not valid JSON: %s.", api, path, why);
    dump_config config;
    bool wanted = false;
    ret = parse_dump_section(api, path, root, &config, &wanted);
    nn_json_free(root);
    if (ret != ACL_SUCCESS || !wanted)
        return ret;
    install_config(&config, false);
    nn_log(NN_LOG_INFO, "%s: dump configured from \"%s\" (path=%s, single operators %s, mode %s).", api, path,
           config.path, config.data ? "on" : "off",
           config.inputs && config.outputs ? "all" : config.inputs ? "input" : "output");
    return ACL_SUCCESS;
}

aclError nn_dump_configure_at_init(const char *configPath)
{
    if (configPath == NULL || configPath[0] == '\0')
        return ACL_SUCCESS;
    return apply_config_file("aclInit", configPath, ACL_ERROR_PARSE_FILE);
}

void nn_dump_finalize(void)
{
    pthread_mutex_lock(&g_dump_lock);
    g_args_on = false;
    pthread_mutex_unlock(&g_dump_lock);
    install_config(NULL, true);
}

/* ---- the API ------------------------------------------------------------------------------- */

static aclError require_init(const char *api)
{
    if (nn_rt_initialized())
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_UNINITIALIZE, "%s: aclInit must be executed before %s is called.", api, api);
}

ACL_FUNC_VISIBILITY aclError aclmdlInitDump(void)
{
    aclError ret = require_init("aclmdlInitDump");
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&g_dump_lock);
    bool again = g_init_dump;
    g_init_dump = true;
    pthread_mutex_unlock(&g_dump_lock);
    if (again)
        return nn_rt_error(ACL_ERROR_REPEAT_INITIALIZE, "aclmdlInitDump: this API cannot be called "
                           "repeatedly (call aclmdlFinalizeDump first).");
    return ACL_SUCCESS;
}

/* ACL_ERROR_UNINITIALIZE before aclInit, ACL_ERROR_DUMP_NOT_RUN before aclmdlInitDump. */
static aclError require_init_dump(const char *api)
{
    aclError ret = require_init(api);
    if (ret != ACL_SUCCESS)
        return ret;
    pthread_mutex_lock(&g_dump_lock);
    bool initialized = g_init_dump;
    pthread_mutex_unlock(&g_dump_lock);
    if (initialized)
        return ACL_SUCCESS;
    return nn_rt_error(ACL_ERROR_DUMP_NOT_RUN, "%s: aclmdlInitDump must be executed before %s is called.",
                       api, api);
}

ACL_FUNC_VISIBILITY aclError aclmdlSetDump(const char *dumpCfgPath)
{
    static const char api[] = "aclmdlSetDump";
    aclError ret = require_init_dump(api);
    if (ret != ACL_SUCCESS)
        return ret;
    if (dumpCfgPath == NULL)
        return nn_rt_error(ACL_ERROR_INVALID_PARAM, "%s: dumpCfgPath must not be null.", api);
    return apply_config_file(api, dumpCfgPath, ACL_ERROR_INVALID_DUMP_CONFIG);
}

ACL_FUNC_VISIBILITY aclError aclmdlFinalizeDump(void)
{
    aclError ret = require_init_dump("aclmdlFinalizeDump");
    if (ret != ACL_SUCCESS)
        return ret;
    /* CANN turns the dump off (whichever call configured it) and closes its dump server; launches
     * already queued keep the plan they were given at their phase-2 call. */
    install_config(NULL, true);
    return ACL_SUCCESS;
}

/* The exception dumps' directory for the program's own data, "<root>/extra-info/data-dump",
 * made and made absolute, as CANN's ExceptionDumper::CreateExtraDumpPath (runtime:src/dfx/adump/
 * adump/exception/exception_dumper.cpp): root is an exception scene's dump_path, else "./".
 * NULL when it cannot be made.  Caller holds g_dump_lock. */
static const char *extra_dump_path_locked(void)
{
    static char resolved[PATH_MAX];
    char wanted[PATH_MAX];
    const char *root = g_configured && g_config.exception && g_config.path[0] ? g_config.path : ".";
    snprintf(wanted, sizeof wanted, "%s/extra-info/data-dump", root);
    if (!nn_make_dirs(wanted) || realpath(wanted, resolved) == NULL) {
        nn_log(NN_LOG_WARNING, "acldumpGetPath: \"%s\" cannot be made (%s).", wanted, strerror(errno));
        return NULL;
    }
    return resolved;
}

ACL_FUNC_VISIBILITY const char *acldumpGetPath(acldumpType dumpType)
{
    const char *path = NULL;
    pthread_mutex_lock(&g_dump_lock);
    if (dumpType == AIC_ERR_BRIEF_DUMP || dumpType == AIC_ERR_NORM_DUMP || dumpType == AIC_ERR_DETAIL_DUMP)
        path = extra_dump_path_locked();
    else if (dumpType == DATA_DUMP || dumpType == OVERFLOW_DUMP) /* the data dump's path, as written */
        path = g_configured && !g_config.exception && g_config.path[0] ? g_config.path : NULL;
    pthread_mutex_unlock(&g_dump_lock);
    return path;
}

ACL_FUNC_VISIBILITY aclError aclopStartDumpArgs(uint32_t dumpType, const char *path)
{
    static const char api[] = "aclopStartDumpArgs";
    if (path == NULL)
        return nn_rt_error(ACL_ERROR_FAILURE, "%s: path must not be null.", api);
    if ((dumpType & ACL_OP_DUMP_OP_AICORE_ARGS) != ACL_OP_DUMP_OP_AICORE_ARGS)
        return nn_rt_error(ACL_ERROR_FAILURE, "%s: dumpType must be ACL_OP_DUMP_OP_AICORE_ARGS (%u), got %u.",
                           api, ACL_OP_DUMP_OP_AICORE_ARGS, dumpType);
    if (path[0] == '\0')
        return nn_rt_error(ACL_ERROR_FAILURE, "%s: path must not be empty.", api);
    if (strlen(path) >= sizeof g_args_path)
        return nn_rt_error(ACL_ERROR_FAILURE, "%s: path is longer than %zu characters.", api,
                           sizeof g_args_path - 1);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    pthread_mutex_lock(&g_dump_lock);
    aclError ret = ACL_SUCCESS;
    struct stat st;
    if (g_args_on)
        ret = nn_rt_error(ACL_ERROR_FAILURE, "%s: already started (call aclopStopDumpArgs first).", api);
    else if (!nn_make_dirs(dir))
        ret = nn_rt_error(ACL_ERROR_FAILURE, "%s: path \"%s\" cannot be created (%s).", api, path, strerror(errno));
    else if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        ret = nn_rt_error(ACL_ERROR_FAILURE, "%s: path \"%s\" is not a directory.", api, path);
    else if (access(path, R_OK | W_OK) != 0)
        ret = nn_rt_error(ACL_ERROR_FAILURE, "%s: path \"%s\" is not readable and writable.", api, path);
    if (ret == ACL_SUCCESS) {
        snprintf(g_args_path, sizeof g_args_path, "%s", path);
        g_args_on = true;
        publish_switch_locked();
    }
    pthread_mutex_unlock(&g_dump_lock);
    return ret;
}

ACL_FUNC_VISIBILITY aclError aclopStopDumpArgs(uint32_t dumpType)
{
    if ((dumpType & ACL_OP_DUMP_OP_AICORE_ARGS) != ACL_OP_DUMP_OP_AICORE_ARGS)
        return ACL_SUCCESS; /* CANN ignores other types */
    pthread_mutex_lock(&g_dump_lock);
    g_args_on = false;
    publish_switch_locked();
    pthread_mutex_unlock(&g_dump_lock);
    return ACL_SUCCESS;
}

/* The data of dumps goes to `messageCallback` instead of files until acldumpUnregCallback (CANN's
 * order: register, then aclmdlInitDump / SetDump; a launch uses the callback registered at its
 * phase-2 call).  flag is reserved: 0. */
ACL_DUMP_API aclError acldumpRegCallback(int32_t (*const messageCallback)(const acldumpChunk *, int32_t),
                                         int32_t flag)
{
    if (messageCallback == NULL)
        return nn_rt_error(ACL_ERROR_FAILURE, "acldumpRegCallback: messageCallback must not be null.");
    if (flag != 0)
        return nn_rt_error(ACL_ERROR_FAILURE, "acldumpRegCallback: flag is reserved and must be 0, got %d.",
                           (int)flag);
    pthread_mutex_lock(&g_dump_lock);
    g_callback = messageCallback;
    pthread_mutex_unlock(&g_dump_lock);
    return ACL_SUCCESS;
}

ACL_DUMP_API void acldumpUnregCallback(void)
{
    pthread_mutex_lock(&g_dump_lock);
    g_callback = NULL;
    pthread_mutex_unlock(&g_dump_lock);
}

/* ---- what a launch dumps ------------------------------------------------------------------- */

/* "<dump_path>/<product>/<pid>", made if missing (`make`), absolute when the data goes to a
 * callback (acldumpChunk.fileName is an absolute path); false (and a warning) when it cannot be. */
static bool make_launch_dir(char *dir, size_t size, const char *dump_path, const char *product, bool make)
{
    char cwd[PATH_MAX] = "";
    if (dump_path[0] != '/' && !make && getcwd(cwd, sizeof cwd) == NULL)
        cwd[0] = '\0';
    int n = snprintf(dir, size, "%s%s%s/%s/%ld", cwd, cwd[0] ? "/" : "", dump_path, product, (long)getpid());
    if (n < 0 || (size_t)n >= size || (make && !nn_make_dirs(dir))) {
        nn_log(NN_LOG_WARNING, "dump: directory \"%s\" cannot be made (%s); the launch is not dumped.", dir,
               strerror(errno));
        return false;
    }
    return true;
}

nn_dump_launch *nn_dump_launch_new(nn_stream *stream)
{
    pthread_mutex_lock(&g_dump_lock);
    dump_config config = g_config;
    bool data = g_configured && g_config.data;
    bool args = g_args_on;
    int32_t (*callback)(const acldumpChunk *, int32_t) = g_callback;
    char args_path[PATH_MAX];
    snprintf(args_path, sizeof args_path, "%s", g_args_path);
    pthread_mutex_unlock(&g_dump_lock);
    if (!data && !args)
        return NULL;
    nn_dump_launch *launch = calloc(1, sizeof *launch);
    if (launch == NULL) {
        nn_log(NN_LOG_WARNING, "dump: out of memory; the launch is not dumped.");
        return NULL;
    }
    snprintf(launch->product, sizeof launch->product, "%s", nn_soc_family_name(nn_soc_current()));
    snprintf(launch->stream, sizeof launch->stream, "%p", (void *)stream);
    pthread_mutex_lock(&nn_rt_lock);
    launch->device = nn_stream_context(stream)->device;
    pthread_mutex_unlock(&nn_rt_lock);
    launch->callback = callback;
    launch->data = data && make_launch_dir(launch->dir, sizeof launch->dir, config.path, launch->product,
                                           callback == NULL);
    launch->inputs = config.inputs;
    launch->outputs = config.outputs;
    launch->stats = config.stats;
    launch->args = args;
    snprintf(launch->args_dir, sizeof launch->args_dir, "%s", args_path);
    if (launch->data)
        launch->number = atomic_fetch_add(&g_launches, 1) + 1;
    return launch;
}
