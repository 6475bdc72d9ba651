# fc_embed_text(INPUT OUTPUT SYMBOL): OUTPUT, a C++ source defining
#   namespace fc::generated { extern const char* const SYMBOL[]; }
# the text of INPUT in pieces (MSVC takes no string literal over 16 KiB), ending with nullptr.
# Written at configure time; an edit of INPUT configures again. The pieces are cut by bytes: the
# text must be ASCII (a UTF-8 character cut in two would be two invalid literals).
function(fc_embed_text input output symbol)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${input}")
  file(READ "${input}" text)
  if(text MATCHES "[^\t\n\r -~]")
    message(FATAL_ERROR "${input}: not ASCII, and fc_embed_text cuts it by bytes")
  endif()
  string(FIND "${text}" ")fc_text\"" closes)
  if(NOT closes EQUAL -1)
    message(FATAL_ERROR "${input}: holds )fc_text\", which would end its raw string literal")
  endif()
  string(LENGTH "${text}" size)
  set(pieces "")
  set(at 0)
  while(at LESS size)
    string(SUBSTRING "${text}" ${at} 4000 piece)
    string(APPEND pieces "    R\"fc_text(${piece})fc_text\",\n")
    math(EXPR at "${at} + 4000")
  endwhile()
  file(CONFIGURE OUTPUT "${output}" CONTENT
       "// Generated from ${input}: edit that file, not this one.\nnamespace fc::generated {\nextern const char* const ${symbol}[];\nconst char* const ${symbol}[] = {\n@pieces@    nullptr};\n}  // namespace fc::generated\n"
       @ONLY)
endfunction()
