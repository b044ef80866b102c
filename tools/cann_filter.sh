#!/bin/sh
# Writes the C source of one CANN-named filter library (docs/libraries.md) to stdout.
#
#   tools/cann_filter.sh NAME LIBACLNN        e.g. tools/cann_filter.sh libopapi.so build/lib64/libaclnn.so
#   tools/cann_filter.sh --unclassified LIBACLNN
#
# NAME is one of CANN's library names.  The source defines, as stubs, the exported functions of
# LIBACLNN (nm -D) that CANN puts in NAME; it is linked with -Wl,--filter=libaclnn.so, so at run
# time the dynamic loader resolves every one of them in libaclnn.so and the stubs never run.
#
#   libascendcl.so, libacl_rt.so      runtime: every function declared in acl/acl_base_rt.h,
#                                     acl/acl_rt.h, acl/acl_rt_allocator.h and
#                                     acl/acl_rt_memory_soma.h (aclrt*, aclsys*, aclInit,
#                                     aclCreateDataBuffer, aclmdlRI*, aclrtMemPool*, ...)
#   libmsprofiler.so                  acl/acl_prof.h (aclprof*)
#   libascend_dump.so                 acl/acl_dump.h (acldump*, aclopStartDumpArgs, ...)
#   libacl_tdt_channel.so             acl/acl_tdt.h (datasets and channels)
#   libacl_tdt_queue.so               acl/acl_tdt_queue.h (queues, mbufs, routes)
#   libplatform.so                    acl/acl_platform.h (aclplatform*); CANN's also holds the
#                                     platform information classes (C++), which no header declares
#   libc_sec.so                       the bounds-checked functions of securec.h (memcpy_s, ...)
#   libprofapi.so                     Msprof* of profiling/aprof_pub.h that we have
#                                     (MsprofSetDeviceIdByGeModelIdx, for subscriptions)
#   libruntime.so, libacl_rt_impl.so  none of ours: CANN's libraries of these names export its
#                                     internal runtime (rt*) and the implementations behind
#                                     libacl_rt.so (aclrt*Impl), which no public header declares
#   libnnopbase.so                    the aclnn meta API (acl_meta.h, aclnn_base.h), aclnnCpu*
#   libopapi.so, libopapi_nn.so,      the operators aclnnXxx / aclnnXxxGetWorkspaceSize
#   libopapi_math.so, libopapi_cv.so
#   libacl_op_compiler.so             none of ours (CANN's aclopCompile & co. are not implemented)
#
# --unclassified prints the exports no rule places (they go to libascendcl.so); the tests require
# it to print nothing, so a new export must be given a library here.
set -eu

usage() { echo "usage: $0 NAME|--unclassified LIBACLNN" >&2; exit 2; }
[ $# -eq 2 ] || usage
name=$1
lib=$2

case $name in
    libascendcl.so|libacl_rt.so|--unclassified) group=runtime ;;
    libnnopbase.so) group=meta ;;
    libopapi.so|libopapi_nn.so|libopapi_math.so|libopapi_cv.so) group=ops ;;
    libc_sec.so) group=securec ;;
    libmsprofiler.so) group=prof ;;
    libascend_dump.so) group=dump ;;
    libacl_tdt_channel.so) group=tdt_channel ;;
    libacl_tdt_queue.so) group=tdt_queue ;;
    libplatform.so) group=platform ;;
    libprofapi.so) group=profapi ;;
    libacl_op_compiler.so|libruntime.so|libacl_rt_impl.so) group=none ;;
    *) echo "$0: $name is not a CANN library name this build knows" >&2; exit 2 ;;
esac

# one exported function name a line
exports=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" || $2 == "i" { print $3 }' | sort)
[ -n "$exports" ] || { echo "$0: no exported functions in $lib" >&2; exit 1; }
# nm -D shows a symbol of another kind (data) as something else: a filter would need its size
others=$(nm -D --defined-only "$lib" | awk '$2 != "T" && $2 != "W" && $2 != "i" { print $3 }')
[ -z "$others" ] || { echo "$0: $lib exports non-function symbols, not supported: $others" >&2; exit 1; }

# the functions some public headers declare, one name a line: what each header-based group holds
acl_dir=$(dirname "$0")/../libaclnn/include/acl
declared_in() {
    names=$(for header in "$@"; do
        sed -n 's/.*\(ACL_FUNC_VISIBILITY\|MSVP_PROF_API\|ACL_DUMP_API\).*[ *]\(acl[A-Za-z0-9_]*\)(.*/\2/p' \
            "$acl_dir/$header"
    done | sort -u)
    [ -n "$names" ] || { echo "$0: no functions found in $*" >&2; exit 1; }
    printf '%s\n' "$names"
}
runtime_names=$(declared_in acl_base_rt.h acl_rt.h acl_rt_allocator.h acl_rt_memory_soma.h)
prof_names=$(declared_in acl_prof.h)
dump_names=$(declared_in acl_dump.h)
tdt_channel_names=$(declared_in acl_tdt.h)
tdt_queue_names=$(declared_in acl_tdt_queue.h)
platform_names=$(declared_in acl_platform.h)

# classify: prints "group name" for each export
classified=$(printf '%s\n' "$exports" | awk -v runtime="$runtime_names" -v prof="$prof_names" \
    -v dump="$dump_names" -v tdt_channel="$tdt_channel_names" -v tdt_queue="$tdt_queue_names" \
    -v platform="$platform_names" '
    function add(list, group,    n, i, names) { n = split(list, names, "\n"); for (i = 1; i <= n; i++) in_group[names[i]] = group }
    BEGIN { add(runtime, "runtime"); add(prof, "prof"); add(dump, "dump"); add(tdt_channel, "tdt_channel")
            add(tdt_queue, "tdt_queue"); add(platform, "platform") }
    ($0 in in_group)                                       { print in_group[$0], $0; next }
    /^(mem(set|move|cpy)|str(n?cpy|n?cat|tok)|v?sn?printf(_truncated)?|v?sprintf)_s$/ \
                                                           { print "securec", $0; next }
    /^Msprof[A-Z]/                                         { print "profapi", $0; next }
    /^aclnn(Init|Finalize)$/ || /^aclnnCpu/                 { print "meta", $0; next }
    /^aclnn[A-Z]/                                          { print "ops", $0; next }
    /^acl(rt|sys)[A-Z]/                                    { print "runtime", $0; next }
    /^acl(Init|Finalize|FinalizeReference|AppLog|DataTypeSize|Float16ToFloat|FloatToFloat16|GetRecentErrMsg)$/ \
                                                           { print "runtime", $0; next }
    /^[Aa]cl(Create|Destroy|Get|Set|Init|Dump)[A-Z]/       { print "meta", $0; next }
                                                           { print "unclassified", $0 }')

if [ "$name" = --unclassified ]; then
    printf '%s\n' "$classified" | awk '$1 == "unclassified" { print $2 }'
    exit 0
fi

if [ "$group" = runtime ]; then
    printf '%s\n' "$classified" | awk '$1 == "unclassified" { print "warning: no CANN library for " $2 \
        " (tools/cann_filter.sh); exported from libascendcl.so" }' >&2
fi

cat <<EOF
/* Generated by tools/cann_filter.sh from the exports of libaclnn.so: $name, a filter library
 * (linked with -Wl,--filter=libaclnn.so).  The dynamic loader resolves every symbol below in
 * libaclnn.so; these definitions only give the link editor the names $name exports on CANN. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((used)) static void cann_filter_stub(void)
{
    fputs("$name: a stub was called: this library is a filter for libaclnn.so and the dynamic "
          "loader did not apply DT_FILTER (docs/libraries.md)\\n", stderr);
    abort();
}

#define CANN_EXPORT(name) void name(void) __attribute__((alias("cann_filter_stub")));
EOF
printf '%s\n' "$classified" | awk -v g="$group" '
    $1 == g || (g == "runtime" && $1 == "unclassified") { print "CANN_EXPORT(" $2 ")" }'
