# cmake -DWEB_DIR=<web/> -DDIST_DIR=<out> -DOUTPUT=<file.cc> -DNPM=<npm> -P build_console.cmake
# Builds the web console (npm ci when package-lock.json changed, then `npm run build`, which
# type-checks and runs Vite) and embeds it with embed_assets.cmake. When npm fails (offline with
# an empty npm cache, a broken Node.js), the server is built without the console and a warning
# says why: the C++ build never fails because of the console.
set(stamp "${WEB_DIR}/node_modules/.trainyard-npm-ci")
set(ok TRUE)
if(NOT EXISTS "${stamp}" OR "${WEB_DIR}/package-lock.json" IS_NEWER_THAN "${stamp}")
  execute_process(COMMAND "${NPM}" ci --no-audit --no-fund --prefer-offline
                  WORKING_DIRECTORY "${WEB_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    # Some npm releases write lock files without other platforms' optional packages (rollup's
    # native builds), which `npm ci` then rejects; `npm install --no-save` installs the locked
    # versions without rewriting package-lock.json.
    execute_process(COMMAND "${NPM}" install --no-save --no-audit --no-fund --prefer-offline
                    WORKING_DIRECTORY "${WEB_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out2
                    ERROR_VARIABLE out2)
    string(APPEND out "\n${out2}")
  endif()
  if(rc EQUAL 0)
    file(TOUCH "${stamp}")
  else()
    set(ok FALSE)
    message(WARNING "web console: `npm ci` failed in ${WEB_DIR} (${rc}); the server is built "
                    "without the console.\n${out}")
  endif()
endif()
if(ok)
  execute_process(COMMAND "${NPM}" run build -- --outDir "${DIST_DIR}" --emptyOutDir
                  WORKING_DIRECTORY "${WEB_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    set(ok FALSE)
    message(WARNING "web console: `npm run build` failed (${rc}); the server is built without "
                    "the console.\n${out}")
  endif()
endif()
if(ok)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DINPUT_DIR=${DIST_DIR} -DOUTPUT=${OUTPUT}
                          -P "${CMAKE_CURRENT_LIST_DIR}/embed_assets.cmake")
else()
  execute_process(COMMAND "${CMAKE_COMMAND}" -DINPUT_DIR= -DOUTPUT=${OUTPUT}
                          -P "${CMAKE_CURRENT_LIST_DIR}/embed_assets.cmake")
endif()
