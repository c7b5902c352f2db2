# Writes the GUI fixture, renders it in the real window under Xvfb with one center panel shown,
# and checks the PNG. Inputs: XVFB_RUN, APP, TOOL, WORK_DIR, PANEL.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/config)
set(fixture ${WORK_DIR}/tiny-fixture.gguf)
set(png ${WORK_DIR}/${PANEL}.png)

execute_process(COMMAND ${TOOL} write ${fixture} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "writing the fixture failed (${rc})")
endif()

set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
execute_process(
  COMMAND ${XVFB_RUN} -a -s "-screen 0 1600x1000x24"
          ${APP} --screenshot ${png} --frames 4 --size 1600x1000 --panel ${PANEL}
          --select blk.0.attn_q.weight ${fixture}
  RESULT_VARIABLE rc
  TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "modellens --screenshot failed (${rc})")
endif()

execute_process(COMMAND ${TOOL} check-png ${png} 1600 1000 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the screenshot ${png} is not a rendered frame")
endif()
file(GLOB leftovers ${WORK_DIR}/config/*)
if(leftovers)
  message(FATAL_ERROR "screenshot mode wrote settings: ${leftovers}")
endif()
