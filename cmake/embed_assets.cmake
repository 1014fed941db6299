# Turns the viewer's files (HTML, CSS, JavaScript) into one C++ source of raw string literals, so
# `tracedoc view` writes a self-contained page without reading anything at run time.
# Usage: cmake -DOUT=file.cpp -DINPUTS="a.js|b.css" -P embed_assets.cmake
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(text "// Generated from src/report/view_assets by cmake/embed_assets.cmake. Do not edit.\n")
string(APPEND text "#include \"report/view_assets.h\"\n\nnamespace tracedoc::view_assets {\n")
foreach(input ${INPUTS})
  file(READ ${input} content)
  get_filename_component(name ${input} NAME)
  string(MAKE_C_IDENTIFIER ${name} id)
  string(FIND "${content}" ")tdasset\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${input} contains the raw-string delimiter )tdasset\"")
  endif()
  string(APPEND text "const char* const ${id} = R\"tdasset(${content})tdasset\";\n")
endforeach()
string(APPEND text "}  // namespace tracedoc::view_assets\n")
file(WRITE ${OUT} "${text}")
