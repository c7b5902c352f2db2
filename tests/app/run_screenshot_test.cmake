# Renders the real window under Xvfb in screenshot mode and checks the PNG: a rendered frame of
# WIDTHxHEIGHT, and no settings written. Inputs:
#   XVFB_SESSION, APP, TOOL   xvfb_session.sh, modellens, gui_fixture_tool
#   WORK_DIR              emptied first; holds the PNG NAME.png and the config folder
#   NAME                  the PNG's name
#   ARGS                  the app's arguments, separated by '|' (a CMake list cannot cross add_test)
#   FIXTURE               when ON, the GUI fixture is written to WORK_DIR/tiny-fixture.gguf first
#                         and opened after ARGS
#   CUT_FROM, CUT_BYTES   optional: the first CUT_BYTES bytes of CUT_FROM are written to
#                         WORK_DIR/cut.gguf first and opened after ARGS (a file cut short)
#   PARITY_FROM           optional: a byte-level vocabulary GGUF; WORK_DIR/tokenizer.json and
#                         WORK_DIR/text.txt are written from it (gui_fixture_tool write-parity), and
#                         @WORK@ in ARGS stands for WORK_DIR
#   FRAMES, TIMEOUT       optional: frames to render (4), seconds allowed (120)
#   WIDTH, HEIGHT         optional: the window's size (1600x1000)
include(${CMAKE_CURRENT_LIST_DIR}/fixture_steps.cmake)
fresh_work_dir(${WORK_DIR})
set(png ${WORK_DIR}/${NAME}.png)
string(REPLACE "|" ";" app_args "${ARGS}")
if(NOT FRAMES)
  set(FRAMES 4)
endif()
if(NOT TIMEOUT)
  set(TIMEOUT 120)
endif()
if(NOT WIDTH OR NOT HEIGHT)
  set(WIDTH 1600)
  set(HEIGHT 1000)
endif()

if(FIXTURE)
  set(fixture ${WORK_DIR}/tiny-fixture.gguf)
  run_fixture_tool(${TOOL} "the fixture" write ${fixture})
  list(APPEND app_args ${fixture})
endif()

if(PARITY_FROM)
  run_fixture_tool(${TOOL} "the tokenizer.json" write-parity ${PARITY_FROM} ${WORK_DIR})
  list(TRANSFORM app_args REPLACE "@WORK@" "${WORK_DIR}")
endif()

if(CUT_FROM)
  set(cut ${WORK_DIR}/cut.gguf)
  run_fixture_tool(${TOOL} "the cut file" write-cut ${CUT_FROM} ${cut} ${CUT_BYTES})
  list(APPEND app_args ${cut})
endif()

set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
# A cache database of its own, empty at first: the picture does not depend on what ran before.
set(ENV{XDG_CACHE_HOME} ${WORK_DIR}/cache)
execute_process(
  COMMAND ${XVFB_SESSION} ${WIDTH}x${HEIGHT}x24
          ${APP} --screenshot ${png} --frames ${FRAMES} --size ${WIDTH}x${HEIGHT} ${app_args}
  RESULT_VARIABLE rc
  TIMEOUT ${TIMEOUT})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "modellens --screenshot ${app_args} failed (${rc})")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/check_screenshot.cmake)
check_screenshot(${TOOL} ${png} ${WORK_DIR} ${WIDTH} ${HEIGHT})
