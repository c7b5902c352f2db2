# `modellens --screenshot` with a document that fails to open still writes the picture and lists
# the document as failed, but exits 1 and names it, so a script does not take the error page for
# the model it asked for. Inputs:
#   XVFB_SESSION, APP, TOOL   xvfb_session.sh, modellens, gui_fixture_tool
#   WORK_DIR              emptied first; holds the fixture, the PNG and the config folder
include(${CMAKE_CURRENT_LIST_DIR}/fixture_steps.cmake)
fresh_work_dir(${WORK_DIR})
set(fixture ${WORK_DIR}/tiny-fixture.gguf)
run_fixture_tool(${TOOL} "the fixture" write ${fixture})
set(missing ${WORK_DIR}/missing.gguf)
set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
execute_process(
  COMMAND ${XVFB_SESSION} 800x600x24
          ${APP} --screenshot ${WORK_DIR}/shot.png --frames 2 --size 800x600 ${fixture} ${missing}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT 120)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "modellens --screenshot with a missing file exited ${rc}, not 1: ${out} ${err}")
endif()
if(NOT out MATCHES "document failed [^\n]*missing.gguf" OR NOT out MATCHES "document ready [^\n]*tiny-fixture.gguf")
  message(FATAL_ERROR "the document lines are wrong: ${out}")
endif()
if(NOT err MATCHES "modellens: [^\n]*missing.gguf failed to open")
  message(FATAL_ERROR "the failed document is not named on stderr: ${err}")
endif()
if(NOT EXISTS ${WORK_DIR}/shot.png)
  message(FATAL_ERROR "no screenshot written")
endif()
