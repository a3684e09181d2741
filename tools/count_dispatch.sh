#!/bin/sh
# Non-test files outside the wire crate that dispatch on a wire format: a match arm
# on a variant, a comparison with one, or a matches! over one.
V='Format::(Anthropic|OpenaiChat|OpenaiResponses|Gemini)\b'
for f in $(git ls-files 'harness/*.rs' | grep -v '^harness/wire/' | grep -v '/tests/' | grep -v '/benches/' | grep -v 'tests\.rs$'); do
  sed '/^#\[cfg(test)\]/,$d' "$f" | grep -qE "$V\)? *(=>|\||if )|(==|!=) *$V|$V *(==|!=)|matches!\(.*$V" && echo "$f"
done
