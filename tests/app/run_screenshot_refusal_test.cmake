# `modellens --screenshot` onto the file it shows — directly, through a symbolic link and through
# a hard link — or onto a manifest, a blob or a new file of the Ollama store a model it shows came
# from fails, leaves the bytes as they were and leaves no temporary file; under a file-size limit
# (standing in for a full disk) it fails naming the reason and leaves no file.
# Inputs:
#   XVFB_SESSION, APP, TOOL   xvfb_session.sh, modellens, gui_fixture_tool
#   DEMO_STORE            the demo Ollama store, copied into WORK_DIR
#   WORK_DIR              emptied first; holds the fixture, its links and the config folder
include(${CMAKE_CURRENT_LIST_DIR}/fixture_steps.cmake)
fresh_work_dir(${WORK_DIR})
set(fixture ${WORK_DIR}/tiny-fixture.gguf)
run_fixture_tool(${TOOL} "the fixture" write ${fixture})
file(CREATE_LINK ${fixture} ${WORK_DIR}/symlink.gguf SYMBOLIC)
file(CREATE_LINK ${fixture} ${WORK_DIR}/hardlink.gguf)
file(SHA256 ${fixture} before)

set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
foreach(target ${fixture} ${WORK_DIR}/symlink.gguf ${WORK_DIR}/hardlink.gguf)
  execute_process(
    COMMAND ${XVFB_SESSION} 800x600x24
            ${APP} --screenshot ${target} --frames 2 --size 800x600 ${fixture}
    RESULT_VARIABLE rc
    ERROR_VARIABLE err
    TIMEOUT 120)
  if(rc EQUAL 0)
    message(FATAL_ERROR "modellens --screenshot ${target} succeeded over its own input")
  endif()
  if(NOT err MATCHES "E_OUTPUT_IS_INPUT")
    message(FATAL_ERROR "modellens --screenshot ${target}: no E_OUTPUT_IS_INPUT in: ${err}")
  endif()
  file(SHA256 ${fixture} after)
  if(NOT after STREQUAL before)
    message(FATAL_ERROR "modellens --screenshot ${target} changed the input")
  endif()
endforeach()
# A store model, named by reference: its manifest, its store's other files and a new file in the
# store are all off limits.
file(COPY ${DEMO_STORE} DESTINATION ${WORK_DIR})
set(store ${WORK_DIR}/ollama-store)
file(GLOB_RECURSE manifests ${store}/manifests/*)
list(GET manifests 0 manifest)
# Every file of a folder with its digest, as one list.
function(folder_sums dir out)
  set(sums "")
  file(GLOB_RECURSE files ${dir}/*)
  foreach(f ${files})
    file(SHA256 ${f} sum)
    list(APPEND sums "${f}=${sum}")
  endforeach()
  set(${out} "${sums}" PARENT_SCOPE)
endfunction()
folder_sums(${store} store_files_before)
foreach(target ${manifest} ${store}/new.png ${store}/manifests/new.png)
  execute_process(
    COMMAND ${XVFB_SESSION} 800x600x24
            ${APP} --screenshot ${target} --frames 2 --size 800x600 ${store}/tiny-llama:q4_0
    RESULT_VARIABLE rc
    ERROR_VARIABLE err
    TIMEOUT 120)
  if(rc EQUAL 0 OR NOT err MATCHES "E_OUTPUT_IN_STORE|E_OUTPUT_IS_INPUT")
    message(FATAL_ERROR "modellens --screenshot ${target} over a store it shows: exit ${rc}, ${err}")
  endif()
endforeach()
folder_sums(${store} store_files_after)
if(NOT store_files_after STREQUAL store_files_before)
  message(FATAL_ERROR "modellens --screenshot changed the store it shows")
endif()
# 1024 bytes (ulimit counts 512-byte blocks) for modellens alone, with SIGXFSZ ignored so a write
# past it fails with EFBIG instead of ending the process.
execute_process(
  COMMAND ${XVFB_SESSION} 800x600x24
          sh -c "trap '' XFSZ; ulimit -f 2; exec \"$0\" \"$@\"" ${APP} --screenshot ${WORK_DIR}/limited.png --frames 2
          --size 800x600 ${fixture}
  RESULT_VARIABLE rc
  ERROR_VARIABLE err
  TIMEOUT 120)
if(rc EQUAL 0 OR NOT err MATCHES "File too large")
  message(FATAL_ERROR "modellens --screenshot under a file-size limit: exit ${rc}, ${err}")
endif()
if(EXISTS ${WORK_DIR}/limited.png)
  message(FATAL_ERROR "a screenshot was left under the file-size limit")
endif()
if(NOT IS_SYMLINK ${WORK_DIR}/symlink.gguf)
  message(FATAL_ERROR "the symbolic link was replaced")
endif()
file(GLOB leftovers ${WORK_DIR}/.*tmp-*)
if(leftovers)
  message(FATAL_ERROR "temporary files left: ${leftovers}")
endif()
