#!/bin/sh
# The non-test files outside the wire crate that dispatch on a wire format: a
# match arm on a variant, a comparison with one, or a matches! over one.
# `.ci/run` fails when there are more than 3 (docs/architecture.md names them).
V='Format::(Anthropic|OpenaiChat|OpenaiResponses|Gemini)\b'
for f in $(git ls-files 'harness/*.rs' | grep -v '^harness/wire/' | grep -v '/tests/' | grep -v '/benches/' | grep -v 'tests\.rs$'); do
  if sed '/^#\[cfg(test)\]/,$d' "$f" | grep -qE "$V\)? *(=>|\||if )|(==|!=) *$V|$V *(==|!=)|matches!\(.*$V"; then
    echo "$f"
  fi
done
