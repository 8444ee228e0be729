# Sourced by the *_scale.sh benches: a memscope read timed side by side with what it is measured
# against, in one run. Needs WORK (a scratch folder) and RUNS; uses hyperfine when installed
# (min/median/max from its JSON), else the wall time of RUNS runs.

load() { cut -d' ' -f1-3 /proc/loadavg; }

# min, median and max wall milliseconds of a command run N times: hyperfine's when installed.
measure() {
    local runs=$1
    shift
    if command -v hyperfine >/dev/null; then
        hyperfine --runs "$runs" --warmup 1 --export-json "$WORK/h.json" -N "$(printf '%q ' "$@")" \
            >/dev/null 2>"$WORK/h.err" || { cat "$WORK/h.err" >&2; return 1; }
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]
print("%.0f %.0f %.0f" % (r["min"]*1000, r["median"]*1000, r["max"]*1000))' "$WORK/h.json"
    else
        "$@" >/dev/null
        local times=()
        for _ in $(seq "$runs"); do
            local t0=$(date +%s%N)
            "$@" >/dev/null
            times+=($((($(date +%s%N) - t0) / 1000000)))
        done
        local sorted=($(printf '%s\n' "${times[@]}" | sort -n))
        echo "${sorted[0]} ${sorted[$((${#sorted[@]} / 2))]} ${sorted[-1]}"
    fi
}

# One line: a memscope read (the arguments before `--`), what it is measured against (after it,
# named by the caller's `base_label`), both figures and their ratio.
row() {
    local label=$1 target=$2 runs_base=$3
    shift 3
    local split
    for ((split = 1; split <= $#; split++)); do [ "${!split}" = "--" ] && break; done
    local ours=("${@:1:split-1}") base=("${@:split+1}")
    read -r lo mid hi < <(measure "$RUNS" "${ours[@]}")
    read -r blo bmid bhi < <(measure "$runs_base" "${base[@]}")
    local ratio
    ratio=$(python3 -c "import sys; a, b = map(float, sys.argv[1:]); print(f'{a / b:.2f}x' if a >= b else f'1/{b / max(a, 1):.1f}')" "$mid" "$bmid")
    printf '%-26s %6s %6s %6s ms | %-30s %7s %7s %7s ms | %8s  %-12s %s\n' "$label" "$lo" \
        "$mid" "$hi" "${base_label}" "$blo" "$bmid" "$bhi" "$ratio" "$target" "$(load)"
}

header() {
    echo
    echo "== $1"
    printf '%-26s %20s    | %-30s %23s    | %8s  %-12s %s\n' "memscope" "min/median/max" \
        "against" "min/median/max" "ratio" "target" "load"
}

