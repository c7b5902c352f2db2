# Starts the app with no files (it opens the demo Ollama store in front) with one store model
# selected, and checks the PNG. Inputs: XVFB_RUN, APP, TOOL, WORK_DIR, SELECT.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/config)
set(png ${WORK_DIR}/store.png)
set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
execute_process(
  COMMAND ${XVFB_RUN} -a -s "-screen 0 1600x1000x24"
          ${APP} --screenshot ${png} --frames 4 --size 1600x1000 --select ${SELECT}
  RESULT_VARIABLE rc
  TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "modellens --screenshot failed (${rc})")
endif()
execute_process(COMMAND ${TOOL} check-png ${png} 1600 1000 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the screenshot ${png} is not a rendered frame")
endif()
