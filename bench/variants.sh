#!/usr/bin/env bash
# Times schedule variants across the FA3 shapes' corners with attn-run on a
# GPU machine (bf16; d 64/128; causal none/top_left; seq 512/4k/16k). Each
# variant is "TILE MINBLOCKS KNOBS" ("-" = default): ATTN_GPU_TILE
# (BM,BN,WARPS), ATTN_GPU_MIN_BLOCKS_PER_SM (CTAs/SM register target) and
# ATTN_GPU_KNOBS (comma-separated NAME=VALUE, NAME a knob of
# include/attn/Schedule/GpuScheduleKnobs.def by its convert-attn-to-attngpu
# option spelling; attn-run --help lists them),
# e.g. "- - wgmma-scores=0" or "- - staged-output=1,paired-output-max-cols=0";
# see docs/perf-notes.md. MINBLOCKS 0 asks for no CTA target ("-": the
# measured choice).
# A measurement, not a test: attn-run's own medians, no peers.
#   bash bench/variants.sh "- - -" "128,32,4 - -" ...   (bundle in /tmp/b)
# VARIANT_D / VARIANT_S / VARIANT_CAUSAL narrow the shapes. VARIANT_DECODE=1
# times bench.py's decode-like shapes instead (batch 4, 32 query heads, 4 K/V
# heads, d 128, non-causal; q_len VARIANT_Q, default 1 16; kv_len
# VARIANT_KV, default 4096 16384 65536), e.g. to compare query-block sizes:
#   VARIANT_DECODE=1 bash bench/variants.sh "- - -" "64,64,4 - -" "16,64,1 - -"
A=${ATTN_RUN:-/tmp/b/bin/attn-run}
[ $# -gt 0 ] || set -- "- - -" "- 3 -"
time_one() { # time_one TILE MINBLOCKS KNOBS attn-run shape flags...
  local tile=$1 mb=$2 knobs=$3; shift 3
  env $( [ "$tile" != - ] && echo ATTN_GPU_TILE=$tile ) \
      $( [ "${mb:--}" != - ] && echo ATTN_GPU_MIN_BLOCKS_PER_SM=$mb ) \
      $( [ "${knobs:--}" != - ] && echo ATTN_GPU_KNOBS=$knobs ) \
      $A --target gpu --bench --dtype bf16 --layout bhsd "$@" 2>&1 | tail -1
}
for variant in "$@"; do
  read -r tile mb knobs <<<"$variant"
  if [ -n "${VARIANT_DECODE:-}" ]; then
    for q in ${VARIANT_Q:-1 16}; do for kv in ${VARIANT_KV:-4096 16384 65536}; do
      r=$(time_one "$tile" "$mb" "$knobs" --batch 4 --heads 32 --kv-heads 4 \
          --seqlen-q $q --seqlen-kv $kv --head-dim 128 --causal none)
      echo "tile=$tile minblocks=$mb knobs=$knobs decode q=$q kv=$kv $r"
    done; done
    continue
  fi
  for d in ${VARIANT_D:-64 128}; do for c in ${VARIANT_CAUSAL:-none top_left}; do
  for s in ${VARIANT_S:-512 4096 16384}; do
    r=$(time_one "$tile" "$mb" "$knobs" --batch $((16384/s)) \
        --heads $((2048/d)) --seqlen-q $s --seqlen-kv $s --head-dim $d \
        --causal $c)
    echo "tile=$tile minblocks=$mb knobs=$knobs d=$d causal=$c s=$s $r"
  done; done; done
done
